package main

import (
	"fmt"
	"io"

	"github.com/custody-sh/custody/steps"
)

// ResumeCmd drives interrupted intents to their outcome.
type ResumeCmd struct {
	TakeOver []string `name:"take-over" placeholder:"ID" help:"Take over the intent of record ID even though its holder looks alive (a process on another host, or a container that is gone). Say so only when that process is surely gone."`
}

// Help is the long help of resume.
func (ResumeCmd) Help() string {
	return `Re-observes every record that carries an intent and drives it to exactly one
outcome. Every mutating command does this first. An observation that fits no
rule is refused, naming what was seen.

EXIT STATUS: 0 done, 1 error, 3 something was refused or is held by another process.`
}

// Run resumes.
func (c *ResumeCmd) Run(a *App) error {
	e, err := a.env(true)
	if err != nil {
		return err
	}
	res, err := steps.ResumeTakingOver(a.Ctx, e, c.TakeOver)
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
			fmt.Fprintf(w, "%s %s\n", it.Outcome, it.ID)
		}
	})
	return nil
}
