import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canConnect } from '@crm/stack';
import { debianBinary } from './apt.ts';

/** One listening proxy: loopback port → round-robin over `upstreams` (host:port). */
export interface ProxySite {
  port: number;
  upstreams: string[];
  /** Headers nginx sets on every proxied request (e.g. the internal credential). */
  setHeaders?: Record<string, string>;
}

/** The Debian nginx binary; installs the package (apt-get) when it is missing. */
export function nginxBinary(log: (m: string) => void): string {
  return debianBinary('nginx', ['/usr/sbin/nginx', '/usr/bin/nginx'], log);
}

/** The nginx.conf of a set of sites: keep-alive upstreams, no access log, retries on connect errors. */
export function nginxConfig(dir: string, sites: ProxySite[], workers: number): string {
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `  ${t}_temp_path ${join(dir, t)};`).join('\n');
  const blocks = sites.map((site, i) => {
    const servers = site.upstreams.map((u) => `    server ${u} max_fails=1 fail_timeout=3s;`).join('\n');
    const extra = Object.entries(site.setHeaders ?? {})
      .map(([k, v]) => `      proxy_set_header ${k} "${v}";`)
      .join('\n');
    return `  upstream site${i} {
${servers}
    keepalive 64;
  }
  server {
    listen 127.0.0.1:${site.port} reuseport backlog=4096;
    location / {
      proxy_pass http://site${i};
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $remote_addr;
${extra}
    }
  }`;
  });
  return `worker_processes ${workers};
daemon off;
master_process on;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events { worker_connections 8192; }
http {
  access_log off;
${temp}
  client_max_body_size 25m;
  proxy_http_version 1.1;
  proxy_request_buffering off;
  proxy_buffering off;
  proxy_next_upstream error timeout;
  proxy_next_upstream_tries 2;
  proxy_connect_timeout 2s;
  proxy_read_timeout 60s;
${blocks.join('\n')}
}
`;
}

/** Starts nginx in the foreground with a generated config in a temp dir; stop() ends it and removes the dir. */
export async function startNginx(sites: ProxySite[], options: { workers?: number; log?: (m: string) => void } = {}) {
  const log = options.log ?? console.log;
  const binary = nginxBinary(log);
  const dir = mkdtempSync(join(tmpdir(), 'crm-nginx-'));
  for (const t of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, t));
  const conf = join(dir, 'nginx.conf');
  writeFileSync(conf, nginxConfig(dir, sites, options.workers ?? 1));
  const child: ChildProcess = spawn(binary, ['-p', dir, '-c', conf, '-e', join(dir, 'error.log')], { stdio: 'ignore' });
  const deadline = Date.now() + 10_000;
  for (const site of sites) {
    while (!(await canConnect('127.0.0.1', site.port))) {
      if (child.exitCode !== null || Date.now() > deadline) {
        const errors = existsSync(join(dir, 'error.log')) ? readFileSync(join(dir, 'error.log'), 'utf8') : '';
        throw new Error(`nginx did not start: ${errors.slice(-1000)}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    dir,
    /** The master's pid (its workers are its children). */
    pid: child.pid,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGQUIT');
        await new Promise((r) => child.once('exit', r));
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
