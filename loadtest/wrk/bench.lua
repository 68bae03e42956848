-- One request shape for `npm run bench` (wrk, closed loop). Env: WRK_METHOD (GET), WRK_BODY (a
-- JSON body), WRK_KEY_PREFIX (set: every request gets a fresh Idempotency-Key
-- <prefix>-<thread>-<n>). done() prints the figures as one line starting with WRK_JSON.
local method = os.getenv("WRK_METHOD") or "GET"
local body = os.getenv("WRK_BODY")
local prefix = os.getenv("WRK_KEY_PREFIX")

wrk.method = method
if body and body ~= "" then
  wrk.body = body
  wrk.headers["Content-Type"] = "application/json"
end

local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end

-- Without request(), wrk sends one pre-formatted request over and over (the cheapest for reads).
if prefix and prefix ~= "" then
  local count = 0
  function request()
    count = count + 1
    wrk.headers["Idempotency-Key"] = prefix .. "-" .. tostring(tid) .. "-" .. count
    return wrk.format()
  end
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"duration_us":%d,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},"latency_us":{"p50":%d,"p90":%d,"p99":%d,"max":%d}}\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
