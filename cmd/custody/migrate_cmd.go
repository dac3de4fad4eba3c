package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/migrate"
	"github.com/custody-sh/custody/store"
)

// MigrateCmd groups the legacy migration commands.
type MigrateCmd struct {
	Discover MigrateDiscoverCmd `cmd:"" help:"Classify every worktree git registers and every directory beside the main checkout."`
	Plan     MigratePlanCmd     `cmd:"" help:"Audit every candidate and propose a disposition; journal the audits; write the migrate plan."`
	Dispose  MigrateDisposeCmd  `cmd:"" help:"Approve or reject one candidate's disposition, bound to its audit digest."`
	Apply    MigrateApplyCmd    `cmd:"" help:"Carry out the approved dispositions of a migrate plan, re-auditing each candidate first."`
	Status   MigrateStatusCmd   `cmd:"" help:"List pending, refused, retained and removed candidates."`
}

// MigrateDiscoverCmd classifies every place.
type MigrateDiscoverCmd struct {
	ScanLimit int `name:"scan-limit" default:"4096" help:"Read at most this many entries of the main checkout's parent; more is a refusal."`
}

// Help is the long help of migrate discover.
func (MigrateDiscoverCmd) Help() string {
	return `Lists every linked worktree git registers and every directory beside the main
checkout, each classified from git's metadata and device+inode identity, never
from its name: linked and missing (the candidates: their git common dir is this
repository's), in-custody, unregistered (a .git naming this repository that git
does not register), moved (a linked worktree moved without git, known by the
admin entry its .git names: the printed git worktree repair re-registers it,
index and all), contradictory, independent-clone (with how far its HEAD is
ahead of this repository's history), remote (a bare repository a remote of
this repository reads), other-repository, ordinary and symlink. Works before
custody init. Writes nothing.

EXIT STATUS: 0 nothing to migrate, 1 error (an incomplete scan is one),
3 candidates await migration or a moved tree awaits its repair.`
}

// Run classifies.
func (c *MigrateDiscoverCmd) Run(a *App) error {
	e, err := a.env(false)
	if errors.Is(err, store.ErrNotInitialized) {
		// Discovery reads git and the file system; before init no tree is
		// in custody, and nothing is written.
		e, err = a.envWithoutState()
	}
	if err != nil {
		return err
	}
	d, err := migrate.MigrateDiscover(a.Ctx, e, c.ScanLimit)
	if err != nil {
		return err
	}
	a.done(d, func(w io.Writer) {
		fmt.Fprintf(w, "%d candidate(s) among %d place(s) (%d registered, %d scanned in %s)\n", d.Candidates, len(d.Places), d.Bounds.Registered, d.Bounds.Scanned, d.Bounds.ScanDir)
		var rows [][]string
		for _, p := range d.Places {
			rows = append(rows, []string{string(p.Class), p.Path, p.Reason})
		}
		table(w, rows)
		for _, p := range d.Places {
			if p.Retry != "" && p.Registered {
				fmt.Fprintf(w, "to repair %s: %s\n", machine.EscapeControl(p.Path), p.Retry)
			}
		}
		if d.Candidates > 0 {
			fmt.Fprintln(w, "next: custody migrate plan -o migrate.json")
		}
	})
	return nil
}

// MigratePlanCmd audits every candidate.
type MigratePlanCmd struct {
	Out       string `short:"o" name:"out" placeholder:"FILE" required:"" help:"Write the migrate plan (custody.migrate-plan/1 JSON) to FILE."`
	ScanLimit int    `name:"scan-limit" default:"4096" help:"Read at most this many entries of the main checkout's parent; more is a refusal."`
}

// Help is the long help of migrate plan.
func (MigratePlanCmd) Help() string {
	return `Audits every candidate migrate discover admits: registration and lock, branch
or detached HEAD, commits no remote holds, proofs, index and tracked changes,
untracked and ignored entries, stashes that name it, hidden state (per-worktree
refs, operations, submodules), processes in it and its device+inode, and
proposes a disposition: land (push HEAD for review), archive, adopt-and-relocate,
retire (in place, on a fresh proof), release (a gone tree whose HEAD a remote
already holds: nothing is pushed) or reject. A candidate whose audit is already
settled is marked so and asks for nothing. Each audit has a digest; its
observation and proposal are journaled. Nothing else is changed: only a person
approves a disposition (custody migrate dispose).

EXIT STATUS: 0 the plan was written, 1 error.`
}

// Run writes the plan.
func (c *MigratePlanCmd) Run(a *App) error {
	e, err := a.env(false)
	if err != nil {
		return err
	}
	path := a.path(c.Out)
	p, err := migrate.MigratePlan(a.Ctx, e, migrate.MigrateOptions{ScanLimit: c.ScanLimit, PlanFile: path})
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("encode the migrate plan: %w", err)
	}
	if err := steps.WriteFile(path, append(b, '\n'), 0o600); err != nil {
		return outputError(err, path, "custody migrate plan -o NEW-FILE")
	}
	a.done(p, func(w io.Writer) {
		fmt.Fprintf(w, "%d candidate(s) audited; plan %s written to %s\n", len(p.Candidates), p.PlanID, machine.EscapeControl(c.Out))
		var rows [][]string
		for _, cd := range p.Candidates {
			prop := string(cd.Proposal.Disposition)
			if prop == "" {
				prop = "(none)"
			}
			reason := cd.Proposal.Reason
			if cd.Settled != "" {
				prop, reason = "(settled)", "already settled: "+string(cd.Settled)+"; nothing more to do"
			}
			rows = append(rows, []string{cd.Audit.ID, prop, cd.Audit.Path, reason})
		}
		table(w, rows)
		for _, cd := range p.Candidates {
			if cd.Settled != "" {
				continue
			}
			d := cd.Proposal.Disposition
			if d == "" {
				fmt.Fprintf(w, "to keep %s as it is: %s\n", machine.EscapeControl(cd.Audit.ID), machine.CommandOn([]string{"custody", "migrate", "dispose", "--reject", "REASON", "--digest", cd.Digest}, cd.Audit.ID))
				continue
			}
			fmt.Fprintf(w, "to approve %s: %s\n", machine.EscapeControl(cd.Audit.ID), machine.CommandOn([]string{"custody", "migrate", "dispose", "--approve", "--digest", cd.Digest}, cd.Audit.ID))
		}
	})
	return nil
}

// MigrateDisposeCmd records one person's disposition.
type MigrateDisposeCmd struct {
	ID          string `arg:"" help:"Candidate id (git's admin key of the worktree)."`
	Approve     bool   `name:"approve" xor:"verdict" required:"" help:"Approve the proposed disposition (or the one --disposition names)."`
	Reject      string `name:"reject" xor:"verdict" required:"" placeholder:"REASON" help:"Reject the candidate: keep it untouched, for this reason."`
	Disposition string `name:"disposition" placeholder:"D" help:"With --approve: land, archive, adopt-and-relocate, retire, release or reject instead of the proposal."`
	Digest      string `name:"digest" required:"" placeholder:"SHA" help:"The digest of the audit you reviewed (from the migrate plan)."`
}

// Help is the long help of migrate dispose.
func (MigrateDisposeCmd) Help() string {
	return `Records a person's disposition of one candidate, bound to the exact audit
digest reviewed: --approve takes the proposal (or --disposition D, one the audit
permits); --reject REASON keeps the tree untouched and settles it. A digest
that is not the candidate's newest audit is refused: the candidate changed,
and its new audit needs its own review.

EXIT STATUS: 0 recorded, 1 error.`
}

// Run records the disposition.
func (c *MigrateDisposeCmd) Run(a *App) error {
	if !c.Approve && c.Disposition != "" {
		return &usageError{errors.New("--disposition goes with --approve; --reject always keeps the tree untouched")}
	}
	d := machine.Disposition(c.Disposition)
	if d != "" && !validDisposition(d) {
		return &usageError{fmt.Errorf("--disposition %q: want one of %v", c.Disposition, machine.Dispositions())}
	}
	e, err := a.env(false)
	if err != nil {
		return err
	}
	res, err := migrate.MigrateDispose(a.Ctx, e, c.ID, c.Approve, d, c.Reject, c.Digest)
	if err != nil {
		return err
	}
	a.done(res, func(w io.Writer) {
		verb := "approved"
		if !res.Approved {
			verb = "rejected"
		}
		fmt.Fprintf(w, "%s %s: %s (audit %s)\nnext: %s\n", verb, machine.EscapeControl(res.ID), res.Disposition, res.Digest,
			machine.MigrateApplyNext(res.ID, a.pathView(e.Repo.MainCheckout).relative(res.PlanFile)))
	})
	return nil
}

func validDisposition(d machine.Disposition) bool {
	for _, x := range machine.Dispositions() {
		if x == d {
			return true
		}
	}
	return false
}

// MigrateApplyCmd carries out approved dispositions.
type MigrateApplyCmd struct {
	Plan                    string   `arg:"" help:"The migrate plan file."`
	Only                    []string `sep:"none" name:"only" placeholder:"ID" help:"Apply only these candidates."`
	AllowExternalRetirement bool     `name:"allow-external-retirement" help:"Let retire and archive remove trees outside the managed root."`
	Acknowledge             string   `name:"acknowledge-unrecoverable" placeholder:"COMMIT" help:"With one --only ID: end the record whose tree is gone and whose last commit is exactly COMMIT, lost (checked against git)."`
	ScanLimit               int      `name:"scan-limit" default:"4096" help:"Read at most this many entries of the main checkout's parent; more is a refusal."`
}

// Help is the long help of migrate apply.
func (MigrateApplyCmd) Help() string {
	return `Carries out only approved dispositions, candidate by candidate: each is
discovered and audited afresh and must equal the digest approved (a change is
journaled as a new observation that needs a new disposition); the act is
journaled before it starts and its outcome when it ends. retire and archive
adopt the tree, finish it and remove it through custody's ordinary removal
(intent, final observation, non-forced removal, verified absence); outside the
managed root they need --allow-external-retirement. adopt-and-relocate adopts
the tree and moves it into the managed root (custody relocate's relocation
intent and non-forced git worktree move). Killed at any instant,
running it again converges: nothing is removed twice.

EXIT STATUS: 0 every candidate settled, 1 error, 3 something was refused or
is pending.`
}

// Run applies the plan.
func (c *MigrateApplyCmd) Run(a *App) error {
	if c.Acknowledge != "" && len(c.Only) != 1 {
		return &usageError{errors.New("--acknowledge-unrecoverable names exactly one candidate's commit: give exactly one --only ID")}
	}
	b, err := readPlanFile(a.path(c.Plan))
	if err != nil {
		return migratePlanInvalid(err, a.path(c.Plan))
	}
	plan, err := machine.ParseMigratePlan(b)
	if err != nil {
		return migratePlanInvalid(err, a.path(c.Plan))
	}
	e, err := a.mutatingEnv()
	if err != nil {
		return err
	}
	res, err := migrate.MigrateApply(a.Ctx, e, plan, migrate.MigrateOptions{Only: c.Only, AllowExternalRetirement: c.AllowExternalRetirement,
		Acknowledge: c.Acknowledge, PlanFile: c.Plan, ScanLimit: c.ScanLimit})
	if err != nil {
		return err
	}
	a.done(res, func(w io.Writer) {
		for _, it := range res.Items {
			if it.Refusal != nil {
				writeRefusal(w, fmt.Sprintf("%s %s", it.ID, it.Outcome), it.Refusal)
				continue
			}
			fmt.Fprintf(w, "%s %s (%s)\n", machine.EscapeControl(it.ID), it.Outcome, it.Disposition)
		}
		if res.Interrupted != "" {
			fmt.Fprintln(w, res.Interrupted)
		}
		fmt.Fprintln(w, "to see where every candidate stands: custody migrate status")
	})
	return nil
}

// MigrateStatusCmd lists where every candidate stands.
type MigrateStatusCmd struct{}

// Help is the long help of migrate status.
func (MigrateStatusCmd) Help() string {
	return `Replays the journal's migration events: every candidate is pending (no
disposition for its newest audit, approved but not applied, or an act with no
recorded outcome: an interrupted run), refused, retained (landed, rejected,
adopted, released) or removed. Complete only when none is pending or refused.
The branch of a tree retired or released on a remote's proof is kept; while it
still points at the proven commit it is listed with the command that deletes it.

EXIT STATUS: 0 complete, 1 error, 3 something is pending or refused.`
}

// Run lists the standing.
func (c *MigrateStatusCmd) Run(a *App) error {
	e, err := a.env(false)
	if err != nil {
		return err
	}
	res, err := migrate.MigrateStatus(a.Ctx, e)
	if err != nil {
		return err
	}
	a.done(res, func(w io.Writer) {
		word := "incomplete"
		if res.Complete {
			word = "complete"
		}
		fmt.Fprintf(w, "migration %s: %d pending, %d refused, %d retained, %d removed\n", word,
			res.Counts[machine.MigratePending], res.Counts[machine.MigrateRefused], res.Counts[machine.MigrateRetained], res.Counts[machine.MigrateRemoved])
		var rows [][]string
		view := a.pathView(e.Repo.MainCheckout)
		for _, s := range res.Candidates {
			why := s.Why
			if next := machine.MigrateNext(s, view.relative(s.PlanFile)); next != "" {
				why += ": " + next
			}
			rows = append(rows, []string{s.ID, string(s.State), s.Path, why})
		}
		table(w, rows)
		for _, b := range res.LegacyBranches {
			fmt.Fprintf(w, "legacy branch %s of %s is at the proven %s; custody never deletes it; to delete it: %s\n",
				machine.EscapeControl(b.Branch), machine.EscapeControl(b.Candidate), machine.Abbrev(b.Commit, machine.ShortCommit), b.Delete)
		}
	})
	return nil
}

// migratePlanInvalid is the refusal of a migrate plan file that cannot be
// used: its retry makes a fresh one.
func migratePlanInvalid(err error, path string) error {
	if !errors.Is(err, machine.ErrPlanInvalid) {
		return err
	}
	return &machine.Refusal{Code: machine.CodePlanInvalid, Path: path, Retry: "custody migrate plan -o migrate.json",
		Message: err.Error() + "; nothing was done. Make a fresh migrate plan"}
}
