package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/custody-sh/custody/cmd/custody/internal/output"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/failpoint"
	"github.com/custody-sh/custody/steps/migrate"
)

// interruptSignals are the signals that interrupt a command: Ctrl-C
// (SIGINT), kill's default (SIGTERM) and the terminal closing (SIGHUP).
var interruptSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// interruptError is the cause of a command's context once an interrupt
// signal arrived. It is context.Canceled to whatever waits on the
// context, so every step stops as on any cancellation.
type interruptError struct{ sig syscall.Signal }

func (e *interruptError) Error() string { return signalName(e.sig) + " received" }

// Is makes the interrupt a cancellation.
func (e *interruptError) Is(target error) bool { return target == context.Canceled }

// watchInterrupts returns a context that the first interrupt signal
// cancels, with an *interruptError naming it as the cause. The signals
// stay caught until the process exits (a second Ctrl-C does not kill it
// halfway through what it is undoing); run is the process's one command.
func watchInterrupts() context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, interruptSignals...)
	go func() {
		s := <-ch
		sig, _ := s.(syscall.Signal)
		cancel(&interruptError{sig: sig})
		failpoint.Interrupted()
	}()
	return ctx
}

// interruptedBy returns the signal that cancelled ctx, and false when no
// interrupt did.
func interruptedBy(ctx context.Context) (syscall.Signal, bool) {
	var ie *interruptError
	if errors.As(context.Cause(ctx), &ie) {
		return ie.sig, true
	}
	return 0, false
}

// interruptExit is the exit code of a command the signal sig interrupted
// (output.Interrupted).
func interruptExit(sig syscall.Signal) int { return output.Interrupted(int(sig)) }

// signalName is the signal's conventional name.
func signalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return sig.String()
}

// interruptExits reports whether an interrupt decides command's exit
// code. A hook's exit code is its client's contract (the lease hooks exit
// 0 whatever happened; worktree-remove exits 0 only when the tree is
// gone), and its envelope says what the interrupt left.
func interruptExits(command string) bool { return !strings.HasPrefix(command, "hook ") }

// interrupted ends a command the signal sig interrupted, whatever it
// returned: what it did before it stopped on stdout (its result, when it
// returned one: its envelope with --json), one line on stderr that says
// what it finished, what it left midway for custody resume and what it
// did not start (interruptNote), and the exit code 128 + the signal's
// number. The error the interrupt caused is not printed: it is the
// cancellation, or a git command the interrupt ended.
func (a *App) interrupted(sig syscall.Signal, err error) int {
	note := interruptNote{Command: a.Command, Signal: signalName(sig), Reads: a.access == reads}
	left := map[string]bool{}
	if e := a.built; e != nil && !note.Reads {
		note.Committed = e.Store.Committed()
		// The command's context is cancelled: this one bounds the read.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if pending, err := steps.Interrupted(ctx, e); err == nil {
			note.MidwayKnown = true
			for _, p := range pending {
				left[p.ID] = true
				note.Midway = append(note.Midway, fmt.Sprintf("%s (%s %s)", p.ID, p.Intent, p.Kind))
			}
		}
	}
	if err == nil {
		switch res := a.result.(type) {
		case steps.NewResult:
			if res.Interrupted == "" {
				note.Finished = finishedWork
			}
		case migrate.MigrateApplyResult:
			if res.Interrupted == "" {
				note.Finished = finishedWork
			}
		case steps.ApplyResult:
			note.Finished = applyFinished(res)
			note.NotStarted = res.NotStarted
			if res.StoppedAt != "" && note.MidwayKnown && !left[res.StoppedAt] {
				// Stopped before it committed the item's intent.
				note.NotStarted = append([]string{res.StoppedAt}, note.NotStarted...)
			}
			note.Again = machine.CommandAgain(a.args)
		case removeResult:
			note.Finished = removeFinished(res)
			note.NotStarted = res.NotStarted
			if res.StoppedAt != "" && note.MidwayKnown && !left[res.StoppedAt] {
				// Stopped before it committed the tree's intent.
				note.NotStarted = append([]string{res.StoppedAt}, note.NotStarted...)
			}
			note.Again = machine.CommandAgain(a.args)
		default:
			// It returned its result: the interrupt came too late to stop
			// its work.
			note.Finished = finishedWork
		}
		_ = a.print() // stdout may be gone with the terminal; the line still goes
	}
	fmt.Fprintln(a.Stderr, machine.EscapeControl(note.line()))
	return interruptExit(sig)
}

// finishedWork is what the note says of a command that finished its work
// before it saw the interrupt.
const finishedWork = "after it finished its work"

// applyFinished is what an interrupted apply finished, for its note: how
// many of its actions, with their outcomes.
func applyFinished(res steps.ApplyResult) string {
	total := len(res.Items) + len(res.NotStarted)
	if res.StoppedAt != "" {
		total++
	}
	noun := "actions"
	if total == 1 {
		noun = "action"
	}
	if len(res.Items) == 0 {
		if total == 1 {
			return "before its one action finished"
		}
		return fmt.Sprintf("before any of its %d actions finished", total)
	}
	outs := make([]machine.Outcome, len(res.Items))
	for i, it := range res.Items {
		outs[i] = it.Outcome
	}
	return fmt.Sprintf("after %d of %d %s (%s)", len(res.Items), total, noun, countOutcomes(outs))
}

// countOutcomes says how many of outs are each outcome, in the order each
// first appears: "2 removed, 1 refused".
func countOutcomes(outs []machine.Outcome) string {
	counts := map[machine.Outcome]int{}
	var order []machine.Outcome
	for _, o := range outs {
		if counts[o] == 0 {
			order = append(order, o)
		}
		counts[o]++
	}
	parts := make([]string, len(order))
	for i, o := range order {
		parts[i] = fmt.Sprintf("%d %s", counts[o], o)
	}
	return strings.Join(parts, ", ")
}

// removeFinished is what an interrupted remove finished, for its note: how
// many of the trees named it went through, with their outcomes.
func removeFinished(res removeResult) string {
	total := len(res.Trees) + len(res.NotStarted)
	if res.StoppedAt != "" {
		total++
	}
	noun := "trees"
	if total == 1 {
		noun = "tree"
	}
	if len(res.Trees) == 0 {
		if total == 1 {
			return "before it was done with its one tree"
		}
		return fmt.Sprintf("before it was done with any of its %d trees", total)
	}
	outs := make([]machine.Outcome, len(res.Trees))
	for i, t := range res.Trees {
		outs[i] = t.Outcome
	}
	return fmt.Sprintf("after %d of %d %s (%s)", len(res.Trees), total, noun, countOutcomes(outs))
}
