package custody

import (
	"context"
	"time"

	"github.com/custody-sh/custody/observe"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/steps"
)

// GitRunner is handed every git command custody runs. run runs the
// command for real, with custody's fixed environment (no prompts, no
// replace objects, C locale) and its limits; an implementation records,
// traces or times the command around it and returns what run returned.
// The default calls run and nothing else.
//
// An implementation that does not call run runs no git, and custody then
// decides over whatever it returns: custody's own tests never do that
// (they run real git), and nothing should.
type GitRunner interface {
	RunGit(ctx context.Context, c hostio.Cmd, run func(context.Context, hostio.Cmd) (hostio.Result, error)) (hostio.Result, error)
}

// Clock is the time custody reads: it is written into every journal entry
// and record, and compared with lease expiries. The default is
// SystemClock.
type Clock interface {
	Now() time.Time
}

// ClockFunc makes a function a Clock.
type ClockFunc func() time.Time

// Now returns f().
func (f ClockFunc) Now() time.Time { return f() }

// SystemClock is the system's clock: time.Now.
func SystemClock() Clock { return ClockFunc(time.Now) }

// ProcessScanner scans every process once for the in-use checks: a tree
// a process stands in, or holds a file of, is in use and kept. The
// default is SystemProcesses.
//
// An implementation reports processes it cannot observe by returning
// &observe.Processes{Err: why}: every tree is then kept as in use, unknown
// never being idle. A nil result is taken the same way, never as "nobody".
// &observe.Processes{} (nobody anywhere) is for a program that vouches no
// process uses its trees.
type ProcessScanner interface {
	Scan() *observe.Processes
}

// ProcessScanFunc makes a function a ProcessScanner.
type ProcessScanFunc func() *observe.Processes

// Scan returns f().
func (f ProcessScanFunc) Scan() *observe.Processes { return f() }

// SystemProcesses scans the system's processes (/proc on Linux, lsof on
// macOS; elsewhere every tree is kept as in use).
func SystemProcesses() ProcessScanner { return ProcessScanFunc(observe.ScanProcesses) }

// Output receives what custody reports while it works. Results are never
// sent here: each method returns its own. The default reports nothing.
type Output interface {
	// Step reports progress of long work (plan, apply): done of total,
	// and what is being worked on. It must be cheap.
	Step(done, total int, what string)
	// Resumed reports one interrupted intent that a mutating method
	// (New, Finish, Apply) settled, or left refused, before doing its own
	// work, as every mutating custody command does first.
	Resumed(item steps.ResumeItem)
}

// scanWith is s as the core's scan function: a nil scan result is unknown.
func scanWith(s ProcessScanner) func() *observe.Processes {
	return func() *observe.Processes {
		if p := s.Scan(); p != nil {
			return p
		}
		return &observe.Processes{Err: "the process scanner returned no scan"}
	}
}
