package machine

import (
	"fmt"
	"time"
)

// TimedOutRefusal is the observation-timed-out refusal of the tree at
// tree for t, a command that ran out of its deadline while it was
// observed. It names the command, where it ran and the time it had; the
// retry is command (plan, resume) with a deadline four times as long (a
// command that hangs outright hangs again: the message says what to look
// at).
func TimedOutRefusal(tree string, t TimedOut, command string) Refusal {
	where := ""
	if t.Dir != "" && t.Dir != tree {
		where = " (run in " + t.Dir + ")"
	}
	retry := "custody " + command
	if d, err := time.ParseDuration(t.Deadline); err == nil && d > 0 {
		retry = "custody --observe-timeout " + ShortDuration(4*d) + " " + command
	}
	return refuse(CodeObservationTimedOut, tree, retry,
		"observing %s, %s%s did not finish within %s: it and every process it started (a filter, hook or helper git runs) were killed, so what it would have said is unknown; if it hangs, find what it waits for (GIT_TRACE=1) before trying again with a longer deadline",
		tree, t.Command, where, t.Deadline)
}

// ShortDuration renders d as a person writes it: "5m", "90s", "1h30m",
// "250ms".
func ShortDuration(d time.Duration) string {
	if d <= 0 || d%time.Second != 0 {
		return d.String()
	}
	var out string
	if h := d / time.Hour; h > 0 {
		out += fmt.Sprintf("%dh", h)
		d -= h * time.Hour
	}
	if m := d / time.Minute; m > 0 {
		out += fmt.Sprintf("%dm", m)
		d -= m * time.Minute
	}
	if d > 0 {
		out += fmt.Sprintf("%ds", d/time.Second)
	}
	return out
}
