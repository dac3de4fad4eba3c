package main

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/custody-sh/custody/observe/hostio"
)

// leaseHookCommand is a parsed lease hook: the command kong would have
// chosen, ready to run.
type leaseHookCommand interface {
	Run(a *App) error
}

// fastHook parses args without kong when they are a lease hook (session-start,
// heartbeat, session-end) with only the flags such a hook is written with:
// --session, --agent, --lease, --ensure (session-start), --json,
// --lock-timeout and -C/--chdir, each at most once, values given as the next
// argument or after "=". It returns the command and the globals exactly as
// kong's parse of the same arguments would set them (TestFastHookAgreesWithKong
// and FuzzFastHook hold it to that), and ok false for anything else (help,
// --version, an unknown or repeated flag, a value that looks like a flag, a
// duration kong would refuse, text that is not UTF-8, any other command): kong then parses it as
// before, so its answers and its errors do not change. Agents run a lease hook
// on every prompt and tool call, and building kong's model costs more than the
// hook's own work.
func fastHook(args []string) (leaseHookCommand, Globals, bool) {
	g := Globals{LockTimeout: 10 * time.Second, RemoteTimeout: 60 * time.Second, ObserveTimeout: hostio.ObserveTimeout}
	if len(args) < 2 || args[0] != "hook" {
		return nil, g, false
	}
	var (
		session hookSession
		lease   = hookLeaseFlags{Lease: 30 * time.Minute}
		ensure  bool
	)
	takesLease, takesEnsure := true, false
	switch args[1] {
	case "session-start":
		takesEnsure = true
	case "heartbeat":
	case "session-end":
		takesLease = false
	default:
		return nil, g, false
	}
	seen := map[string]bool{}
	rest := args[2:]
	for len(rest) > 0 {
		arg := rest[0]
		rest = rest[1:]
		if !utf8.ValidString(arg) {
			return nil, g, false // kong reads invalid UTF-8 as U+FFFD
		}
		name, value, inline := strings.Cut(arg, "=")
		if name == "-C" && inline {
			return nil, g, false // kong reads "-C=x" as the directory "=x"
		}
		flag := name
		if flag == "-C" {
			flag = "--chdir" // one flag, two spellings
		}
		if seen[flag] {
			return nil, g, false
		}
		seen[flag] = true
		switch name {
		case "--json":
			if inline {
				return nil, g, false
			}
			g.JSON = true
			continue
		case "--ensure":
			if inline || !takesEnsure {
				return nil, g, false
			}
			ensure = true
			continue
		case "--session", "--agent", "--lease", "--lock-timeout", "-C", "--chdir":
		default:
			return nil, g, false
		}
		if !inline {
			if len(rest) == 0 {
				return nil, g, false
			}
			value, rest = rest[0], rest[1:]
			if !utf8.ValidString(value) {
				return nil, g, false
			}
		}
		if strings.HasPrefix(value, "-") {
			return nil, g, false
		}
		switch flag {
		case "--session":
			session.Session = value
		case "--agent":
			session.Agent = value
		case "--chdir":
			g.Chdir = value
		case "--lease", "--lock-timeout":
			d, err := time.ParseDuration(value)
			if err != nil || name == "--lease" && !takesLease {
				return nil, g, false
			}
			if name == "--lease" {
				lease.Lease = d
			} else {
				g.LockTimeout = d
			}
		}
	}
	switch args[1] {
	case "session-start":
		return &HookSessionStartCmd{hookSession: session, hookLeaseFlags: lease, Ensure: ensure}, g, true
	case "heartbeat":
		return &HookHeartbeatCmd{hookSession: session, hookLeaseFlags: lease}, g, true
	default:
		return &HookSessionEndCmd{hookSession: session}, g, true
	}
}
