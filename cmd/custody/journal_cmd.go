package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/report"
	"github.com/custody-sh/custody/store"
)

// JournalCmd groups the journal commands.
type JournalCmd struct {
	Export JournalExportCmd `cmd:"" help:"Stream the journal, one entry per line."`
	Verify JournalVerifyCmd `cmd:"" help:"Check an exported journal offline."`
	Head   JournalHeadCmd   `cmd:"" help:"Print the journal's chain head."`
	Report JournalReportCmd `cmd:"" help:"Write the auditor's report: one self-contained HTML (or markdown) page."`
	Sign   JournalSignCmd   `cmd:"" help:"Sign the journal's chain head with an SSH key."`
}

// JournalExportCmd exports the journal.
type JournalExportCmd struct {
	Format string `name:"format" enum:"jsonl,md" default:"jsonl" help:"jsonl (verifiable) or md."`
	Redact bool   `name:"redact" help:"Replace each path, host, user, remote URL and credential by its commitment (older entries: placeholders)."`
	Record string `name:"record" placeholder:"ID" complete:"records" help:"Only this record's entries (verify with --allow-gaps)."`
	Out    string `short:"o" name:"out" placeholder:"FILE" help:"Write to FILE instead of stdout (- is stdout)."`
}

// Help is the long help of journal export.
func (JournalExportCmd) Help() string {
	return `Streams every journal entry in constant memory. Each jsonl line is the stored
entry: seq, at, record, kind, from, to, trigger, intent, proof, observation,
outcome, actor, prev, hash, and (since schema 7) salt and redact. With --redact,
each path, host, user, remote URL and credential (by the entry's structure)
is replaced by its commitment and the salt dropped: the line keeps its hash
and adds member_digests, and still verifies every value it shows. An entry
written before schema 7 is redacted as it was: placeholders and body_digest.

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
		opts.Redact = redactor(e.Repo.MainCheckout)
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
	Redacted  bool   `name:"redacted" help:"Accept a redacted export (every value it shows is checked; entries written before content authentication by chain only, unless --home, --root and --host are given)."`
	Home      string `name:"home" placeholder:"DIR" help:"With --redacted: the home directory the export replaced with $HOME in entries of the first rule, to check their content."`
	Root      string `name:"root" placeholder:"DIR" help:"With --redacted: the repository root the export replaced with $REPO in entries of the first rule, to check their content."`
	Host      string `name:"host" placeholder:"NAME" help:"With --redacted: the host name the export replaced with $HOST in entries of the first rule, to check their content."`
	signatureFlags
}

// signatureFlags check an export's head against an SSH signature.
type signatureFlags struct {
	Signature      string `name:"signature" placeholder:"FILE" help:"A signature of the head (custody journal sign); needs --allowed-signers."`
	AllowedSigners string `name:"allowed-signers" placeholder:"FILE" help:"ssh-keygen allowed signers: who may have signed the head."`
}

// check returns the signature check the flags ask for (nil for none).
func (f signatureFlags) check(a *App, filtered bool) (*report.SignatureCheck, error) {
	if f.Signature == "" && f.AllowedSigners == "" {
		return nil, nil
	}
	if f.Signature == "" || f.AllowedSigners == "" {
		return nil, &usageError{errors.New("--signature and --allowed-signers go together: the signature says who signed, the allowed signers say who may")}
	}
	if filtered {
		return nil, &usageError{errors.New("--signature checks the head of a whole journal; an export filtered to one record does not end at it")}
	}
	return &report.SignatureCheck{Run: &hostio.Runner{}, Signature: a.path(f.Signature), AllowedSigners: a.path(f.AllowedSigners)}, nil
}

// Help is the long help of journal verify.
func (JournalVerifyCmd) Help() string {
	return `Checks, offline, that every entry's hash matches its content and chains to the
entry before it. Names the first entry that was changed, dropped, inserted or
reordered. With --head, also catches entries dropped from the end. Lines are
read in constant memory (a line longer than 1 MiB does not verify), a member
repeated in an object does not verify, and a final newline is optional.

A redacted export (--redacted) is checked by content, with no secret needed:
every entry written since content authentication began (schema 7; verify
names the seq) commits to each redactable value (each path, host, user,
remote URL, credential) by a salted digest, and a redacted line shows the
commitment in the value's place, with member_digests. A changed value is
named: the entry and its member. Entries written before keep their rule: a
redacted one carries body_digest and "redacted" and is checked by chain
only, unless given the values it replaced (--home, --root, --host): then
verify puts them back and checks its content against body_digest too.

With --signature FILE --allowed-signers FILE, verify also checks that the
head the export ends at is the one signed with custody journal sign
(ssh-keygen -Y verify, namespace custody-journal) by an allowed signer, and
names the signer; a signature over another head is refused.

EXIT STATUS: 0 verified, 1 it does not verify (or cannot be read).`
}

// Run verifies.
func (c *JournalVerifyCmd) Run(a *App) error {
	f, err := os.Open(a.path(c.File))
	if err != nil {
		return err
	}
	defer f.Close()
	sig, err := c.check(a, c.AllowGaps)
	if err != nil {
		return err
	}
	rep, err := store.Verify(f, store.VerifyOptions{Head: c.Head, AllowGaps: c.AllowGaps, Redacted: c.Redacted, Home: c.Home, Root: c.Root, Host: c.Host})
	if err != nil {
		return fmt.Errorf("%s: %w", c.File, err)
	}
	signer := ""
	if sig != nil {
		if signer, err = sig.Check(a.Ctx, rep.Head); err != nil {
			return err
		}
	}
	a.done(rep, func(w io.Writer) {
		fmt.Fprintf(w, "%s verifies: %d entries, head %s", machine.EscapeControl(c.File), rep.Entries, rep.Head)
		switch {
		case rep.Redacted > 0 && rep.ChainOnly == 0:
			fmt.Fprintf(w, " (%d redacted entries, all checked by content)", rep.Redacted)
		case rep.ContentChecked > 0:
			fmt.Fprintf(w, " (%d redacted entries, %d of them checked by content, the rest by chain only)", rep.Redacted, rep.ContentChecked)
		case rep.Redacted > 0:
			fmt.Fprintf(w, " (%d redacted entries checked by chain only)", rep.Redacted)
		}
		fmt.Fprintln(w)
		switch {
		case rep.Redacted == 0:
			// Unredacted: every entry's content is checked, whatever its rule.
		case rep.ContentFrom == 1:
			fmt.Fprintln(w, "content authenticated from seq 1: every value shown is checked, redacted or not")
		case rep.ContentFrom > 1:
			fmt.Fprintf(w, "content authenticated from seq %d: every value shown from there on is checked, redacted or not; entries before it were written under the first rule\n", rep.ContentFrom)
		default:
			fmt.Fprintln(w, "no entry is committed: every entry was written under the first rule (a redacted one is checked by chain only unless --home, --root and --host are given)")
		}
		if len(rep.RedactedFields) > 0 {
			fmt.Fprintf(w, "redacted by structure, each value replaced by its commitment: %s\n", report.RedactedFields(rep.RedactedFields))
		}
		if signer != "" {
			fmt.Fprintf(w, "the head is signed by %s\n", signer)
		}
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

// redactor redacts what identifies this machine and person: the home
// directory, the repository root root and the host name.
func redactor(root string) *store.Redactor {
	home, _ := os.UserHomeDir()
	host, _ := os.Hostname()
	return &store.Redactor{Home: home, Root: root, Host: host}
}

// JournalReportCmd writes the auditor's report.
type JournalReportCmd struct {
	File      string `arg:"" optional:"" help:"An export written by custody journal export (default: this repository's live journal)."`
	Format    string `name:"format" enum:"html,md" default:"html" help:"html (one self-contained page) or md."`
	Redact    bool   `name:"redact" help:"Replace each path, host, user, remote URL and credential by its commitment (older entries: placeholders)."`
	Record    string `name:"record" placeholder:"ID" complete:"records" help:"Only this record's sections."`
	AllowGaps bool   `name:"allow-gaps" help:"The export was filtered with --record: accept its gaps."`
	Head      string `name:"head" placeholder:"HASH" help:"The chain head the journal must end at (custody journal head)."`
	Home      string `name:"home" placeholder:"DIR" help:"For a redacted FILE: the home directory it replaced with $HOME in entries of the first rule, to check their content."`
	Root      string `name:"root" placeholder:"DIR" help:"For a redacted FILE: the repository root it replaced with $REPO in entries of the first rule, to check their content."`
	Host      string `name:"host" placeholder:"NAME" help:"For a redacted FILE: the host name it replaced with $HOST in entries of the first rule, to check their content."`
	Out       string `short:"o" name:"out" placeholder:"FILE" help:"Write to FILE instead of stdout (- is stdout)."`
	signatureFlags
}

// Help is the long help of journal report.
func (JournalReportCmd) Help() string {
	return `Writes one page an auditor can read offline: a verification banner (chain
verified or the first bad entry named, head pinned or not, signature checked
or not), a summary (trees created, adopted, removed, archived, migrated by
disposition, kept, abandoned; build output deleted; resources made and
destroyed; archives; recovery refs; chain head, entry count, time span), then
one group per record kind and operation (worktrees removed, legacy trees
migrated by land, ...), each record in one section with its whole timeline.
Every removal shows the intent that preceded it and the proof that allowed it
(kind, tip and remote, covered commits, observation digest, plan id,
fingerprint), the build output deleted with the tree, the branch outcome with
its old commit and the recovery refs written; every legacy tree shows its
audit digest, the disposition approved and by whom, and the outcome; every
abandonment is marked as the one outcome without a proof, with the
acknowledged commit.

The report reads FILE (an export, redacted or not) or, without FILE, the live
journal, in one streaming pass: rows go to a temporary file as they are read,
and memory holds each record's facts, never the journal. A redacted FILE is
checked as journal verify checks it: by content from the seq where content
authentication began (the banner names it), before it by chain, and by
content where --home, --root and --host give back what it replaced; the live
journal is verified before it is redacted for display. The banner says what
redaction replaced (paths, hosts, users, URLs, secrets). The HTML page has inline
CSS, no script and a Content-Security-Policy that loads nothing: it makes no
request when opened. -o FILE is written like journal export -o.

A journal that does not verify still gets its report, whose banner names the
first bad entry and marks it and every later entry unverified (exit 3). A
--head the journal does not end at, or a --signature that does not verify
against --allowed-signers, is refused and writes nothing (exit 1).

EXIT STATUS: 0 written and verified, 3 written but the chain does not verify,
1 error (nothing written).`
}

// Run writes the report.
func (c *JournalReportCmd) Run(a *App) error {
	toStdout := c.Out == "" || c.Out == stdoutPath
	if a.Globals.JSON && toStdout {
		return &usageError{errors.New("journal report --json needs -o FILE: the report itself is the output, and stdout holds the one envelope")}
	}
	boundReportHeap()
	sig, err := c.check(a, c.AllowGaps || (c.Record != "" && c.File != ""))
	if err != nil {
		return err
	}
	opts := report.ReportOptions{Format: c.Format, Record: c.Record, Signature: sig, Version: version, Kinds: reportKinds(),
		Verify: store.VerifyOptions{Head: c.Head, AllowGaps: c.AllowGaps, Redacted: c.File != "", Home: c.Home, Root: c.Root, Host: c.Host}}
	var src report.EntrySource
	if c.File != "" {
		f, err := os.Open(a.path(c.File))
		if err != nil {
			return err
		}
		defer f.Close()
		opts.Source = "the export " + c.File
		src = func(fn func([]byte) error) error { return store.ReadLines(f, fn) }
		if c.Redact {
			root := ""
			if e, err := a.env(false); err == nil {
				root = e.Repo.MainCheckout
			}
			opts.Redact = redactor(root)
		}
	} else {
		e, err := a.env(false)
		if err != nil {
			return err
		}
		opts.Source = "the live journal of this repository"
		if c.Redact {
			opts.Redact = redactor(e.Repo.MainCheckout)
		}
		src = func(fn func([]byte) error) error {
			return e.Store.Journal("", func(line []byte, _ store.Entry) error { return fn(line) })
		}
	}
	var res report.ReportResult
	if toStdout {
		res, err = report.Report(a.Ctx, src, a.Stdout, opts)
		if err != nil {
			return err
		}
		reportLine(a.Stderr, "", res)
		a.done(res, nil)
		return nil
	}
	path := a.path(c.Out)
	f, err := steps.CreateFile(path, 0o600)
	if err != nil {
		return outputError(err, path, "custody journal report -o NEW-FILE")
	}
	defer f.Abort()
	if res, err = report.Report(a.Ctx, src, f, opts); err != nil {
		return err
	}
	if err := f.Commit(); err != nil {
		return err
	}
	a.done(res, func(w io.Writer) { reportLine(w, c.Out, res) })
	return nil
}

// reportLine is the report's human summary.
func reportLine(w io.Writer, out string, res report.ReportResult) {
	s, v := res.Summary, res.Verification
	where := ""
	if out != "" {
		where = "wrote " + machine.EscapeControl(out) + ": "
	}
	fmt.Fprintf(w, "%s%d entries, %d trees removed, %d kept, %d abandoned\n", where, s.Entries, s.TreesRemoved, s.TreesKept, s.TreesAbandoned)
	if !v.ChainVerified {
		fmt.Fprintf(w, "the journal does not verify: %s\n\tto see where it broke: custody journal verify --redacted FILE\n", strings.TrimSpace(v.FirstBad))
	}
}

// JournalSignCmd signs the chain head.
type JournalSignCmd struct {
	Out string `short:"o" name:"out" required:"" placeholder:"FILE" help:"Where to write the signature."`
	Key string `name:"key" placeholder:"FILE" help:"The SSH private key to sign with (default ~/.ssh/id_ed25519)."`
}

// Help is the long help of journal sign.
func (JournalSignCmd) Help() string {
	return `Signs the journal's chain head (custody journal head) with an SSH key:
ssh-keygen -Y sign, namespace custody-journal, over the line
"custody journal head HASH". Hand the signature to an auditor beside the
export; journal verify and journal report check it with --signature FILE
--allowed-signers FILE, so the auditor knows who exported the journal and
that nothing was changed or cut off since.

EXIT STATUS: 0 done, 1 error.`
}

// Run signs the head.
func (c *JournalSignCmd) Run(a *App) error {
	e, err := a.env(false)
	if err != nil {
		return err
	}
	seq, head, err := e.Store.Head()
	if err != nil {
		return err
	}
	key := c.Key
	if key == "" {
		home, _ := os.UserHomeDir()
		key = filepath.Join(home, ".ssh", "id_ed25519")
	} else {
		key = a.path(key)
	}
	sig, err := report.SignHead(a.Ctx, &hostio.Runner{}, key, head)
	if err != nil {
		return err
	}
	path := a.path(c.Out)
	f, err := steps.CreateFile(path, 0o644)
	if err != nil {
		return outputError(err, path, "custody journal sign -o NEW-FILE")
	}
	defer f.Abort()
	if _, err := f.Write(sig); err != nil {
		return err
	}
	if err := f.Commit(); err != nil {
		return err
	}
	a.done(map[string]any{"seq": seq, "head": head, "out": c.Out}, func(w io.Writer) {
		fmt.Fprintf(w, "signed head %s (seq %d) into %s\n", head, seq, machine.EscapeControl(c.Out))
	})
	return nil
}
