package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/store"
)

// JournalCmd groups the journal commands.
type JournalCmd struct {
	Export JournalExportCmd `cmd:"" help:"Stream the journal, one entry per line."`
	Verify JournalVerifyCmd `cmd:"" help:"Check an exported journal offline."`
	Head   JournalHeadCmd   `cmd:"" help:"Print the journal's chain head."`
}

// JournalExportCmd exports the journal.
type JournalExportCmd struct {
	Format string `name:"format" enum:"jsonl,md" default:"jsonl" help:"jsonl (verifiable) or md."`
	Redact bool   `name:"redact" help:"Replace the home directory and repository root with placeholders; strip URL credentials."`
	Record string `name:"record" placeholder:"ID" help:"Only this record's entries (verify with --allow-gaps)."`
	Out    string `short:"o" name:"out" placeholder:"FILE" help:"Write to FILE instead of stdout (- is stdout)."`
}

// Help is the long help of journal export.
func (JournalExportCmd) Help() string {
	return `Streams every journal entry in constant memory. Each jsonl line is the stored
entry: seq, at, record, kind, from, to, trigger, intent, proof, observation,
outcome, actor, prev, hash. A redacted line keeps its hash and adds body_digest.

Without -o, or with -o -, the export goes to stdout (so not with --json).
-o FILE replaces FILE atomically and durably, only once the whole export is
written: an export that fails leaves FILE as it was. A symlink, directory,
FIFO or device at FILE is refused and left alone.

EXIT STATUS: 0 done, 1 error.`
}

// Run exports.
func (c *JournalExportCmd) Run(a *App) error {
	toStdout := c.Out == "" || c.Out == stdoutPath
	if a.Globals.JSON && toStdout {
		return &usageError{errors.New("journal export --json needs -o FILE: the export itself is the output, and stdout holds the one envelope")}
	}
	e, err := a.env(false)
	if err != nil {
		return err
	}
	opts := store.ExportOptions{Format: c.Format, Record: c.Record}
	if c.Redact {
		home, _ := os.UserHomeDir()
		opts.Redact = &store.Redactor{Home: home, Root: e.Repo.MainCheckout}
	}
	if toStdout {
		if err := e.Store.Export(a.Stdout, opts); err != nil {
			return err
		}
	} else if err := exportFile(e.Store, a.path(c.Out), opts); err != nil {
		return err
	}
	a.done(map[string]any{"out": c.Out}, nil)
	return nil
}

// exportFile streams the export into path durably: path is replaced only
// once the whole export is written and synced, and an export that fails
// leaves it as it was, with no temporary file behind.
func exportFile(st *store.Store, path string, opts store.ExportOptions) error {
	f, err := steps.CreateFile(path, 0o600)
	if err != nil {
		return outputError(err, path, "custody journal export -o NEW-FILE")
	}
	defer f.Abort()
	if err := st.Export(f, opts); err != nil {
		return err
	}
	return f.Commit()
}

// JournalVerifyCmd verifies an export.
type JournalVerifyCmd struct {
	File      string `arg:"" help:"An export written by custody journal export."`
	Head      string `name:"head" placeholder:"HASH" help:"The chain head the export must end at (custody journal head)."`
	AllowGaps bool   `name:"allow-gaps" help:"Accept an export filtered with --record."`
	Redacted  bool   `name:"redacted" help:"Accept a redacted export (its content is checked by chain only, unless --home and --root are given)."`
	Home      string `name:"home" placeholder:"DIR" help:"With --redacted: the home directory the export replaced with $HOME, to check redacted entries' content."`
	Root      string `name:"root" placeholder:"DIR" help:"With --redacted: the repository root the export replaced with $REPO, to check redacted entries' content."`
}

// Help is the long help of journal verify.
func (JournalVerifyCmd) Help() string {
	return `Checks, offline, that every entry's hash matches its content and chains to the
entry before it. Names the first entry that was changed, dropped, inserted or
reordered. With --head, also catches entries dropped from the end. Lines are
read in constant memory (a line longer than 1 MiB does not verify), a member
repeated in an object does not verify, and a final newline is optional.

A redacted export (--redacted) is checked by chain only: each redacted line
carries body_digest, the digest of the original body, and "redacted", what
was replaced. Given the values it replaced (--home, --root), verify puts
them back and checks each such line's content against body_digest too; a
line whose URL credentials were stripped stays checked by chain only.

EXIT STATUS: 0 verified, 1 it does not verify (or cannot be read).`
}

// Run verifies.
func (c *JournalVerifyCmd) Run(a *App) error {
	f, err := os.Open(a.path(c.File))
	if err != nil {
		return err
	}
	defer f.Close()
	rep, err := store.Verify(f, store.VerifyOptions{Head: c.Head, AllowGaps: c.AllowGaps, Redacted: c.Redacted, Home: c.Home, Root: c.Root})
	if err != nil {
		return fmt.Errorf("%s: %w", c.File, err)
	}
	a.done(rep, func(w io.Writer) {
		fmt.Fprintf(w, "%s verifies: %d entries, head %s", c.File, rep.Entries, rep.Head)
		switch {
		case rep.ContentChecked > 0:
			fmt.Fprintf(w, " (%d redacted entries, %d of them checked by content, the rest by chain only)", rep.Redacted, rep.ContentChecked)
		case rep.Redacted > 0:
			fmt.Fprintf(w, " (%d redacted entries checked by chain only)", rep.Redacted)
		}
		fmt.Fprintln(w)
	})
	return nil
}

// JournalHeadCmd prints the chain head.
type JournalHeadCmd struct{}

// Help is the long help of journal head.
func (JournalHeadCmd) Help() string {
	return `Prints the journal's last sequence number and chain hash. Keep it beside an
export and pass it to journal verify --head to catch entries dropped from the end.

EXIT STATUS: 0 done, 1 error.`
}

// Run prints the head.
func (c *JournalHeadCmd) Run(a *App) error {
	e, err := a.env(false)
	if err != nil {
		return err
	}
	seq, head, err := e.Store.Head()
	if err != nil {
		return err
	}
	a.done(map[string]any{"seq": seq, "head": head}, func(w io.Writer) { fmt.Fprintf(w, "%d %s\n", seq, head) })
	return nil
}
