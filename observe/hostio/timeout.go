package hostio

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/custody-sh/custody/machine"
)

// ErrTimedOut is matched (errors.Is) by the error of a command that was
// still running at its deadline: Runner.Run killed it and every process it
// started, so what it would have said is unknown.
var ErrTimedOut = errors.New("command ran out of time")

// TimeoutError is the error of a command that ran out of its deadline. It
// is ErrTimedOut, and context.DeadlineExceeded, to errors.Is.
type TimeoutError struct {
	// Cmd is the command, as it was run (its Dir included).
	Cmd Cmd
	// After is the time it was given, from its start to its deadline.
	After time.Duration
	// Observing is set when the command only read (a git observation,
	// bounded by Git.ObserveTimeout), so a longer --observe-timeout is
	// what retries it.
	Observing bool
}

// Error names the command, where it ran and the time it was given.
func (e *TimeoutError) Error() string {
	where := ""
	if e.Cmd.Dir != "" {
		where = " in " + e.Cmd.Dir
	}
	return fmt.Sprintf("%s%s: no answer within %s; it and every process it started were killed", e.Cmd, where, machine.ShortDuration(RoundDeadline(e.After)))
}

// Is makes errors.Is(err, ErrTimedOut) hold.
func (e *TimeoutError) Is(target error) bool { return target == ErrTimedOut }

// Unwrap makes errors.Is(err, context.DeadlineExceeded) hold too.
func (e *TimeoutError) Unwrap() error { return context.DeadlineExceeded }

// RoundDeadline renders the time a command was given as a person set it:
// a deadline taken from a context that was made a moment before the
// command started (on a busy machine, tens of milliseconds before) reads
// 60s, not 59.9998s, and 1s, not 999ms. From a tenth of a second up it is
// shown to the tenth, below that to the millisecond.
func RoundDeadline(d time.Duration) time.Duration {
	switch {
	case d >= 100*time.Millisecond:
		return d.Round(100 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(time.Millisecond)
	}
	return d
}

// timeoutNotes collects the commands that ran out of time while one tree
// was observed, each once, in the order they ended. It is safe for
// concurrent use; a nil *timeoutNotes notes nothing.
type timeoutNotes struct {
	mu   sync.Mutex
	seen map[string]bool
	list []machine.TimedOut
}

// Note records err when it is a *TimeoutError.
func (n *timeoutNotes) Note(err error) {
	var te *TimeoutError
	if n == nil || !errors.As(err, &te) {
		return
	}
	t := machine.TimedOut{Command: te.Cmd.Quoted(), Dir: te.Cmd.Dir, Deadline: machine.ShortDuration(RoundDeadline(te.After))}
	n.mu.Lock()
	defer n.mu.Unlock()
	if key := t.Dir + "\x00" + t.Command; !n.seen[key] {
		n.seen[key] = true
		n.list = append(n.list, t)
	}
}

// Taken returns what was noted.
func (n *timeoutNotes) Taken() []machine.TimedOut {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.list)
}

// Noting returns a Git that runs as g does and notes every command of its
// own that runs out of time, and the notes: what one tree's observation
// ran, whatever became of each error on the way.
func (g *Git) Noting() (*Git, *timeoutNotes) {
	n := &timeoutNotes{seen: map[string]bool{}}
	c := *g
	c.Timeouts = n
	return &c, n
}
