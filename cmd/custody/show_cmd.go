package main

import (
	"fmt"
	"io"

	"github.com/custody-sh/custody/cmd/custody/internal/output"
	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/store"
)

// ShowCmd shows one record.
type ShowCmd struct {
	ID string `arg:"" complete:"trees" help:"The worktree: its id, a unique id prefix, the tree's directory name or its path."`
}

// Help is the long help of show.
func (ShowCmd) Help() string {
	return `Shows one record: its state, intent, evidence and journal, and, unless it is
tombstoned, a fresh observation with the verdict plan would give and every
observation that verdict rests on. The tree is named by its id, a unique id
prefix, its directory name or its path (a tombstoned record only when no live
one fits).

EXIT STATUS: 0 done, 1 error (an unknown or ambiguous tree).`
}

// showResult is show's result.
type showResult = output.ShowResult

// Run shows the record.
func (c *ShowCmd) Run(a *App) error {
	e, err := a.env(false)
	if err != nil {
		return err
	}
	id, err := steps.ResolveRecord(e, a.Dir, c.ID, "custody list --all")
	if err != nil {
		return err
	}
	res, err := steps.Show(a.Ctx, e, id)
	if err != nil {
		return err
	}
	out := showResult{Record: res.Record, Intent: res.Record.Intent, Observation: res.Observation, Verdict: res.Verdict, Journal: res.Journal}
	if out.Journal == nil {
		out.Journal = []store.Entry{}
	}
	out.Resources = res.Resources
	if out.Resources == nil {
		out.Resources = []machine.Resource{}
	}
	a.done(out, func(w io.Writer) {
		r := res.Record
		rows := [][]string{
			{"id", r.ID}, {"state", string(r.State)}, {"origin", string(r.Origin)},
			{"path", r.Path}, {"branch", branchShown(r, e.Policy)}, {"base", r.BaseCommit},
		}
		if r.Evidence.FinalHead != "" {
			rows = append(rows, []string{"final head", r.Evidence.FinalHead})
		}
		if r.Evidence.Outcome != "" {
			rows = append(rows, []string{"outcome", r.Evidence.Outcome})
		}
		if r.Evidence.BranchOutcome != "" {
			rows = append(rows, []string{"branch", r.Evidence.BranchOutcome + " " + r.Evidence.BranchReason})
		}
		if r.Intent != nil {
			b, _ := json.Marshal(r.Intent)
			rows = append(rows, []string{"intent", string(b)})
		}
		// The state, second row, in its colour (palette.state).
		pal := a.palette()
		var laid []row
		for _, r := range rows {
			laid = append(laid, row{cells: r})
		}
		layTable(w, laid, func(i, col int, cell string) string {
			if i == 1 && col == 1 {
				return pal.state(machine.State(cell))
			}
			return cell
		}, 0)
		if o := res.Observation; o != nil {
			fmt.Fprintln(w, "observed now:")
			st := o.Status
			fmt.Fprintf(w, "  path %s, registered %v, HEAD %s, branch %s, locked %v\n", o.PathState, o.Registered, machine.Abbrev(o.Head, machine.ShortCommit), o.Branch, o.Locked)
			fmt.Fprintf(w, "  status: %d changed (%d staged), %d unmerged, %d untracked, %d ignored\n", len(st.Changed), st.Staged, len(st.Unmerged), len(st.Untracked), len(st.Ignored))
			for _, p := range st.Ignored {
				fmt.Fprintf(w, "    ignored %s\n", p)
			}
			for _, h := range o.Hidden {
				fmt.Fprintf(w, "  hidden [%s] %s %s\n", h.Code, h.Path, h.Detail)
			}
			for _, p := range o.InUse {
				fmt.Fprintf(w, "  in use by %d (%s) via %s\n", p.PID, p.Command, p.Via)
			}
			if o.Proof != nil {
				fmt.Fprintf(w, "  proof: %s of %s on %s %s %v\n", o.Proof.Kind, machine.Abbrev(o.Proof.Head, machine.ShortCommit), o.Proof.Remote, o.Proof.Ref, o.Proof.Commits)
				if o.Proof.Via != "" {
					fmt.Fprintf(w, "  via: %s (the published commit that holds the work)\n", o.Proof.Via)
				}
			}
		}
		if v := res.Verdict; v != nil {
			fmt.Fprintf(w, "verdict: %s\n", v.Action)
			for _, r := range v.Refusals {
				writeRefusal(w, " ", &r)
			}
		}
		if len(res.Resources) > 0 {
			fmt.Fprintln(w, "resources:")
			for _, r := range res.Resources {
				fmt.Fprintf(w, "  %s %s %s (%s)\n", r.Name, r.State, r.Handle, orDash(r.Evidence.Outcome))
			}
		}
		fmt.Fprintln(w, "journal:")
		for _, j := range res.Journal {
			if j.Event != "" { // not a transition: a lease change, a recovery, a hook's error
				detail := machine.EscapeControl(string(j.Detail))
				if r := []rune(detail); len(r) > 160 {
					detail = string(r[:160]) + "…"
				}
				fmt.Fprintf(w, "  %d %s %s %s\n", j.Seq, j.At.UTC().Format("2006-01-02T15:04:05Z"), j.Event, detail)
				continue
			}
			fmt.Fprintf(w, "  %d %s %s -> %s (%s) %s\n", j.Seq, j.At.UTC().Format("2006-01-02T15:04:05Z"), j.From, j.To, j.Trigger, j.Outcome)
		}
	})
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// branchShown is a record's branch with what becomes of it: custody
// deletes a branch it created after a proven removal, never another
// (machine.BranchOwned).
func branchShown(r machine.Record, pol machine.Policy) string {
	switch {
	case r.Branch == "" || r.Kind != machine.KindWorktree:
		return r.Branch
	case machine.BranchOwned(r, pol):
		return r.Branch + " (custody created it)"
	}
	return r.Branch + " (" + machine.BranchNotCreated + ": never deleted)"
}
