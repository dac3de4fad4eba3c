package main

import (
	"fmt"
	"io"

	"github.com/custody-sh/custody/steps"
)

// ResumeCmd drives interrupted intents to their outcome.
type ResumeCmd struct {
	TakeOver []string `sep:"none" name:"take-over" placeholder:"ID" complete:"trees" help:"Take over the intent of record ID (an id, a unique id prefix, the tree's directory name or its path; a resource by its exact id) even though its holder looks alive (a process on another host, or a container that is gone). Say so only when that process is surely gone."`
}

// Help is the long help of resume.
func (ResumeCmd) Help() string {
	return `Re-observes every record that carries an intent and drives it to exactly one
outcome. Every mutating command does this first. An observation that fits no
rule is refused, naming what was seen. An intent another custody on this host
is carrying out at this moment (its process alive) is that process's work: it
is reported in progress (pid, command, since when), neither refused nor taken
over; every other mutating command, resuming first, says nothing of it.

EXIT STATUS: 0 done (another custody's live work here included), 1 error, 3
something was refused or is held by a process on another host, 130 (143
SIGTERM, 129 SIGHUP) interrupted (run custody resume again).`
}

// Run resumes.
func (c *ResumeCmd) Run(a *App) error {
	e, err := a.env(true)
	if err != nil {
		return err
	}
	takeOver, err := resolveTakeOver(e, a.Dir, c.TakeOver)
	if err != nil {
		return err
	}
	res, err := steps.ResumeTakingOver(a.Ctx, e, takeOver)
	if err != nil {
		return err
	}
	a.done(res, func(w io.Writer) {
		if len(res.Items) == 0 {
			fmt.Fprintln(w, "nothing to resume")
		}
		for _, it := range res.Items {
			if it.Refusal != nil {
				writeRefusal(w, string(it.Outcome)+" "+it.ID, it.Refusal)
				continue
			}
			if p := it.Progress; p != nil {
				sayf(w, "%s %s: %s %s\n", it.Outcome, it.ID, p.Intent, p)
				continue
			}
			sayf(w, "%s %s\n", it.Outcome, it.ID)
		}
	})
	return nil
}

// resolveTakeOver names the records --take-over means: a resource ledger
// entry by its exact id (worktree-id/name), any other reference as a
// worktree (steps.ResolveRecords).
func resolveTakeOver(e *steps.Env, dir string, refs []string) ([]string, error) {
	out := make([]string, 0, len(refs))
	for _, ref := range refs {
		if _, err := e.Store.GetResource(ref); err == nil {
			out = append(out, ref)
			continue
		}
		id, err := steps.ResolveRecord(e, dir, ref, "custody list")
		if err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, nil
}
