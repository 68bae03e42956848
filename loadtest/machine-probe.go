// What the machine charges for the kernel work every request hop needs, so that bench runs on
// different machines can be compared by more than their model name (loadtest/README.md): a system
// call, a page fault (a page handed back with MADV_DONTNEED and touched again, as an allocator's
// purge makes it), a wake-up of another process (a pipe round trip) and a loopback TCP round trip
// between two processes, and whether the kernel isolates its page tables from user space (PTI)
// with or without the CPU's PCID, which sets what every entry into the kernel costs.
// `go run loadtest/machine-probe.go` prints one line; the bench prints it in its header.
package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"time"
)

const (
	syscalls   = 200_000
	roundTrips = 10_000
	pages      = 16_384
	repeats    = 5
)

// median of repeats of f, each returning nanoseconds per operation.
func median(f func() float64) float64 {
	v := make([]float64, repeats)
	for i := range v {
		v[i] = f()
	}
	sort.Float64s(v)
	return v[repeats/2]
}

func syscallNs() float64 {
	start := time.Now()
	for i := 0; i < syscalls; i++ {
		syscall.RawSyscall(syscall.SYS_GETPPID, 0, 0, 0)
	}
	return float64(time.Since(start).Nanoseconds()) / syscalls
}

func pageFaultNs() float64 {
	size := pages * os.Getpagesize()
	memory, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		panic(err)
	}
	defer syscall.Munmap(memory)
	syscall.Madvise(memory, syscall.MADV_NOHUGEPAGE) // one fault per page, not per huge page
	for i := 0; i < size; i += os.Getpagesize() {
		memory[i] = 1
	}
	syscall.Madvise(memory, syscall.MADV_DONTNEED)
	start := time.Now()
	for i := 0; i < size; i += os.Getpagesize() {
		memory[i] = 1
	}
	return float64(time.Since(start).Nanoseconds()) / pages
}

// echo is the child: it answers every byte on stdin (a pipe) or on the TCP address it is given.
func echo(conn io.ReadWriter) {
	b := make([]byte, 1)
	for {
		if _, err := conn.Read(b); err != nil {
			return
		}
		if _, err := conn.Write(b); err != nil {
			return
		}
	}
}

func pingPong(conn io.ReadWriter) float64 {
	b := []byte{1}
	start := time.Now()
	for i := 0; i < roundTrips; i++ {
		conn.Write(b)
		if _, err := io.ReadFull(conn, b); err != nil {
			panic(err)
		}
	}
	return float64(time.Since(start).Nanoseconds()) / roundTrips
}

// pageTableIsolation says whether the kernel runs with page-table isolation (its Meltdown
// mitigation, which switches page tables on every entry into the kernel and back) and, if so,
// whether the CPU has PCID, without which each switch also empties the TLB. Forced on with
// `pti=on`, it applies to CPUs that Meltdown does not affect too.
func pageTableIsolation() string {
	meltdown, err := os.ReadFile("/sys/devices/system/cpu/vulnerabilities/meltdown")
	if err != nil {
		return "page-table isolation unknown"
	}
	if !strings.Contains(string(meltdown), "PTI") {
		return "no page-table isolation"
	}
	cpuinfo, _ := os.ReadFile("/proc/cpuinfo")
	for _, line := range strings.Split(string(cpuinfo), "\n") {
		if strings.HasPrefix(line, "flags") {
			for _, flag := range strings.Fields(line) {
				if flag == "pcid" {
					return "page-table isolation on, with PCID"
				}
			}
			break
		}
	}
	return "page-table isolation on, without PCID"
}

type pipePair struct {
	io.Reader
	io.Writer
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "echo-pipe" {
		echo(pipePair{os.Stdin, os.Stdout})
		return
	}
	if len(os.Args) > 2 && os.Args[1] == "echo-tcp" {
		conn, err := net.Dial("tcp", os.Args[2])
		if err != nil {
			os.Exit(1)
		}
		conn.(*net.TCPConn).SetNoDelay(true)
		echo(conn)
		return
	}
	self, _ := os.Executable()

	child := exec.Command(self, "echo-pipe")
	in, _ := child.StdinPipe()
	out, _ := child.StdoutPipe()
	if err := child.Start(); err != nil {
		panic(err)
	}
	pipe := median(func() float64 { return pingPong(pipePair{out, in}) })
	in.Close()
	child.Wait()

	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	child = exec.Command(self, "echo-tcp", listener.Addr().String())
	if err := child.Start(); err != nil {
		panic(err)
	}
	conn, err := listener.Accept()
	if err != nil {
		panic(err)
	}
	conn.(*net.TCPConn).SetNoDelay(true)
	tcp := median(func() float64 { return pingPong(conn) })
	conn.Close()
	child.Wait()

	fmt.Printf("system call %.2f µs, page fault %.2f µs, pipe round trip between processes %.1f µs, loopback TCP round trip %.1f µs; %s\n",
		median(syscallNs)/1000, median(pageFaultNs)/1000, pipe/1000, tcp/1000, pageTableIsolation())
}
