package machine

import (
	"fmt"
	"strings"
	"time"
)

// HolderLiveness is what custody can tell of the process that committed
// an intent (its Holder), as steps reads it from the host.
type HolderLiveness int

// The three answers. Only a holder known gone is taken over; a live one on
// this host is working, and its work is reported in progress, never as
// something to take over; one elsewhere is taken over only on a person's
// word (custody resume --take-over), since custody can tell liveness only
// on its own host.
const (
	// HolderGone: the process is dead (or is this very process, which
	// committed the intent and goes on with it).
	HolderGone HolderLiveness = iota
	// HolderHere: another process on this host, alive now with the start
	// it recorded: the intent is its work in progress.
	HolderHere
	// HolderElsewhere: a process on another host, or one whose liveness
	// cannot be read: custody cannot tell whether it still works.
	HolderElsewhere
)

// LiveWork is an intent another live process on this host is carrying
// out: who (pid, command) and since when (the intent's time). It is that
// process's work in progress, reported as such, with nothing to retry.
type LiveWork struct {
	Intent  IntentKind `json:"intent"`
	PID     int        `json:"pid"`
	Command string     `json:"command,omitempty"`
	Since   time.Time  `json:"since"`
}

// LiveWorkOf is the live work r's intent stands for (its holder being
// HolderHere).
func LiveWorkOf(r Row) LiveWork {
	kind, h, _ := r.RowIntent()
	return LiveWork{Intent: kind, PID: h.PID, Command: h.Command, Since: r.RowIntentAt().UTC()}
}

// String says it the one way custody reports live work:
// "in progress (pid P, command C, since T)"; the command is left out of an
// intent an older custody wrote without it.
func (w LiveWork) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "in progress (pid %d", w.PID)
	if w.Command != "" {
		fmt.Fprintf(&b, ", command %s", w.Command)
	}
	if !w.Since.IsZero() {
		fmt.Fprintf(&b, ", since %s", w.Since.UTC().Format(time.RFC3339))
	}
	b.WriteString(")")
	return b.String()
}

// InProgressRefusal refuses acting on record r while a live process holds
// its intent (live is HolderHere or HolderElsewhere). A process on this
// host is named in progress, with no take-over: it is working, and once it
// is done the retry finds nothing left. One elsewhere is named with how to
// take its intent over once it is surely gone, the one thing custody
// cannot see for itself.
func InProgressRefusal(r Row, live HolderLiveness) *Refusal {
	kind, h, _ := r.RowIntent()
	if live == HolderHere {
		return &Refusal{Code: CodeInProgress, Path: r.RowPath(), Retry: "custody resume",
			Message: fmt.Sprintf("%s's %s is %s: another custody is carrying it out; once it is done, nothing is left to resume", r.RowID(), kind, LiveWorkOf(r))}
	}
	return &Refusal{Code: CodeInProgress, Path: r.RowPath(),
		Retry:   "custody resume",
		Message: fmt.Sprintf("%s has a %s intent held by live process %d on %s; once that process is surely gone: custody resume --take-over %s", r.RowID(), kind, h.PID, h.Host, QuoteArg(r.RowID()))}
}
