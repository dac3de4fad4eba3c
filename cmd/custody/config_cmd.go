package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/steps"
)

// ConfigCmd groups the commands about custody.toml itself.
type ConfigCmd struct {
	Upgrade ConfigUpgradeCmd `cmd:"" help:"Rewrite custody.toml to the current format, every comment kept: show the diff (--write writes it)."`
}

// ConfigUpgradeCmd rewrites custody.toml to the current format.
type ConfigUpgradeCmd struct {
	Write bool `name:"write" help:"Write the rewritten file (durably, with its mode); without it, only show the diff."`
}

// Help is the long help of config upgrade.
func (ConfigUpgradeCmd) Help() string {
	return `Rewrites custody.toml to the current format (version = 1): discern's
[worktree.db] (clone, drop) and [worktree.dev_server] (link, unlink) become the
resources [resources.db] and [resources.dev_server] (create, destroy),
[worktree.resources.<name>] becomes [resources.<name>], [worktree] port becomes
port_base, and a file without a version gets version = 1. Only those keys'
bytes change: every comment, blank line, value and other key stays as written.
Commands keep their tokens: @db@, @site@ and @worktree@ expand as discern's did.

Without --write it prints the diff and writes nothing. With --write it writes
the file durably. The rewritten file is new content: custody runs its commands
only once you approve it again with custody trust, as any change.

A key it cannot rewrite in place (one written inside [worktree], a key of a
legacy table custody has no counterpart for), a file that would still be
invalid, or a version newer than this custody reads is refused, and nothing is
written. Running it on an upgraded file changes nothing.

It needs no state file and changes no record.

EXIT STATUS: 0 shown, written or already current, 1 error (nothing written).`
}

func (c *ConfigUpgradeCmd) access() access {
	if c.Write {
		return writes
	}
	return reads
}

// Run shows or writes the upgrade.
func (c *ConfigUpgradeCmd) Run(a *App) error {
	repo, err := gitfiles.Discover(a.Ctx, a.git(), a.Dir)
	if err != nil {
		return err
	}
	if c.Write {
		if err := a.refuseUnwritable(repo.MainCheckout); err != nil {
			return err
		}
	}
	res, err := steps.UpgradeConfig(repo, c.Write)
	if err != nil {
		return err
	}
	a.done(res, func(w io.Writer) { writeConfigUpgrade(w, res) })
	return nil
}

// writeConfigUpgrade renders an upgrade: the diff, what was done, and the
// next command.
func writeConfigUpgrade(w io.Writer, res steps.ConfigUpgradeResult) {
	path := machine.EscapeControl(res.Path)
	switch {
	case !res.Present:
		fmt.Fprintf(w, "%s does not exist: nothing to upgrade\n", path)
		return
	case !res.Changed:
		fmt.Fprintf(w, "%s is version %d already: nothing to upgrade\n", path, res.Version)
		return
	}
	for _, line := range strings.SplitAfter(res.Diff, "\n") {
		if line == "" {
			continue
		}
		fmt.Fprintln(w, machine.EscapeControl(strings.TrimSuffix(line, "\n")))
	}
	if !res.Written {
		fmt.Fprintf(w, "%s would be rewritten to version %d as shown; nothing was written\n", path, res.Version)
		fmt.Fprintln(w, "next: custody config upgrade --write")
		return
	}
	fmt.Fprintf(w, "rewrote %s to version %d (sha256 %s)\n", path, res.Version, res.Digest)
	if res.NeedsApproval {
		fmt.Fprintln(w, "its commands run only once you approve this new content")
		fmt.Fprintln(w, "next: custody trust")
	}
}
