package main

import (
	"fmt"
	"io"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/steps"
)

// TrustCmd approves (or revokes) the exact content of custody.toml.
type TrustCmd struct {
	Revoke bool `name:"revoke" help:"Withdraw the approval of custody.toml's current content."`
}

// Help is the long help of trust.
func (TrustCmd) Help() string {
	return `custody.toml may declare commands (a resource's create, destroy and ensure) that
custody runs for you. A file from a branch or a clone is not yours until you
have read it: custody runs a file's commands only after you approve its exact
content, recorded by sha256 in the state file and journaled, as direnv's allow.
A changed file needs approval again. A file that declares no command needs
none.

custody trust prints the file's digest and every command it declares, and
approves it. custody trust --revoke withdraws the approval of the current
content. Commands already frozen in the ledger (a live resource's destroy) are
not affected: see docs/decisions/0015-approved-config.md.

It changes no record, so it does not resume interrupted work first.

EXIT STATUS: 0 done, 1 error.`
}

// Run approves or revokes the current custody.toml.
func (c *TrustCmd) Run(a *App) error {
	e, err := a.env(true)
	if err != nil {
		return err
	}
	var res steps.TrustResult
	if c.Revoke {
		res, err = steps.Revoke(e)
	} else {
		res, err = steps.Trust(e)
	}
	if err != nil {
		return err
	}
	a.done(res, func(w io.Writer) { writeTrust(w, res, c.Revoke) })
	return nil
}

// writeTrust renders a trust result: the file, its digest, what it
// declares, what changed, and the next command.
func writeTrust(w io.Writer, res steps.TrustResult, revoke bool) {
	path := machine.EscapeControl(res.Path)
	if !res.Present {
		sayf(w, "%s does not exist: nothing to approve\n", path)
		return
	}
	sayf(w, "%s\n  sha256 %s\n", path, res.Digest)
	if !res.NeedsApproval {
		fmt.Fprintln(w, "  declares no command: it needs no approval")
		return
	}
	for _, r := range res.Resources {
		fmt.Fprintf(w, "  resource %s\n    create:  %s\n    destroy: %s\n", r.Name, machine.EscapeControl(r.Create), machine.EscapeControl(r.Destroy))
		if r.Ensure != "" {
			fmt.Fprintf(w, "    ensure:  %s\n", machine.EscapeControl(r.Ensure))
		}
	}
	for _, d := range res.Disposable {
		fmt.Fprintf(w, "  disposable %s\n", machine.EscapeControl(d))
	}
	if res.LandCheck != "" {
		fmt.Fprintf(w, "  land check: %s\n", machine.EscapeControl(res.LandCheck))
	}
	switch {
	case revoke && res.Changed:
		fmt.Fprintln(w, "approval revoked: these commands will not run until custody trust")
	case revoke:
		fmt.Fprintln(w, "this content was not approved: nothing changed")
	case res.Changed:
		fmt.Fprintln(w, "approved: custody may run these commands while the file has exactly this content")
		fmt.Fprintln(w, "next: custody new NAME")
	default:
		fmt.Fprintln(w, "already approved: nothing changed")
		fmt.Fprintln(w, "next: custody new NAME")
	}
}
