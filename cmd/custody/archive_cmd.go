package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/custody-sh/custody/cmd/custody/internal/output"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/archive"
)

// ArchiveCmd groups the archive commands.
type ArchiveCmd struct {
	Create  ArchiveCreateCmd  `cmd:"" help:"Archive a worktree's unpublished work: its commits, its files byte for byte, nested repositories."`
	Verify  ArchiveVerifyCmd  `cmd:"" help:"Check an archive: manifest, digests, bundle, and whether its tree still equals it."`
	List    ArchiveListCmd    `cmd:"" help:"List the archives under the archives root (no repository needed)."`
	Restore ArchiveRestoreCmd `cmd:"" help:"Rebuild an archived tree, byte for byte, in a new directory."`
	Prune   ArchivePruneCmd   `cmd:"" help:"Assess which archives may be deleted; --apply NAME deletes exactly those."`
}

// ArchiveCreateCmd captures one tree.
type ArchiveCreateCmd struct {
	ID string `arg:"" complete:"trees" help:"Worktree id."`
}

// Help is the long help of archive create.
func (ArchiveCreateCmd) Help() string {
	return `Archives a worktree into $XDG_DATA_HOME/custody/archives/<repository-id>/<archive-id>/
(mode 0700): commits.bundle (the commits HEAD adds over what the remotes
advertise now), dirty.patch (every file on disk, tracked, untracked and
ignored, byte for byte over HEAD's tree), an image of each nested repository,
and manifest.json, written last. The repository gains no ref and no object,
and the tree's index is not rewritten. A capture that is interrupted counts
for nothing; custody resume removes what it left.

EXIT STATUS: 0 done, 1 error.`
}

// Run captures the archive.
func (c *ArchiveCreateCmd) Run(a *App) error {
	e, err := a.mutatingEnv()
	if err != nil {
		return err
	}
	res, err := archive.CaptureArchive(a.Ctx, e, c.ID)
	if err != nil {
		return err
	}
	a.done(res, func(w io.Writer) {
		sayf(w, "archived %s (%d commits, %d files, %d nested repositories) as %s\n", res.Record, len(res.Commits), res.Files, len(res.Nested), res.ID)
		fmt.Fprintf(w, "%s\n", res.Dir)
		fmt.Fprintf(w, "to check it: custody archive verify %s\n", machine.QuoteArg(res.ID))
	})
	return nil
}

// ArchiveVerifyCmd verifies one archive.
type ArchiveVerifyCmd struct {
	Archive string `arg:"" complete:"archives" help:"Archive id, or the archive's directory."`
}

// Help is the long help of archive verify.
func (ArchiveVerifyCmd) Help() string {
	return `Checks an archive: its manifest, every file's size and SHA-256, the bundle's
pack (indexed apart and compared with the commits' objects, when the
repository it came from is at hand), and, when this repository holds the
archive's record and its tree is still there, that the tree still equals the
archive. An archive directory is checked without any repository.

EXIT STATUS: 0 it verifies, 1 error, 3 it does not verify.`
}

// Run verifies the archive.
func (c *ArchiveVerifyCmd) Run(a *App) error {
	e, g := a.optionalEnv()
	ref := c.Archive
	if filepath.Base(ref) != ref {
		ref = a.path(ref)
	}
	dir, err := archive.ResolveArchiveDir(e, ref)
	if err != nil {
		return err
	}
	res, err := archive.VerifyArchive(a.Ctx, g, e, dir)
	if err != nil {
		return err
	}
	a.done(res, func(w io.Writer) {
		if len(res.Problems) == 0 {
			sayf(w, "archive %s verifies: %s\n", res.ID, res.Dir)
			sayf(w, "  pack: %s\n", res.Pack)
			if res.Fresh != "" {
				sayf(w, "  tree: %s\n", res.Fresh)
			}
			return
		}
		for i := range res.Problems {
			writeRefusal(w, "archive "+res.Dir, &res.Problems[i])
		}
	})
	return nil
}

// ArchiveListCmd lists the archives.
type ArchiveListCmd struct {
	Root string `name:"root" placeholder:"DIR" help:"The archives root (default $XDG_DATA_HOME/custody/archives)."`
}

// Help is the long help of archive list.
func (ArchiveListCmd) Help() string {
	return `Lists every archive under the archives root, each checked by its own
manifest and digests: no repository is needed, since each manifest says which
repository, record, tree and commit it holds.

EXIT STATUS: 0 every archive verifies, 1 error, 3 one does not.`
}

// archiveListResult is archive list's result.
type archiveListResult = output.ArchiveListResult

// Run lists the archives.
func (c *ArchiveListCmd) Run(a *App) error {
	root := a.path(c.Root)
	if root == "" {
		var err error
		if root, err = archive.ArchivesRoot(); err != nil {
			return err
		}
	}
	list, err := archive.ListArchives(root)
	if err != nil {
		return err
	}
	res := archiveListResult{Root: root, Archives: list}
	a.done(res, func(w io.Writer) {
		if len(list) == 0 {
			sayf(w, "no archives under %s\n", root)
			return
		}
		for _, c := range list {
			if len(c.Problems) > 0 {
				writeRefusal(w, "archive "+c.Dir, &c.Problems[0])
				continue
			}
			sayf(w, "%s  %s  %s  %s  %s\n", c.ID, c.Record, c.Head, c.CreatedAt, c.Path)
		}
	})
	return nil
}

// ArchiveRestoreCmd restores an archive.
type ArchiveRestoreCmd struct {
	Archive string `arg:"" complete:"archives" help:"Archive id, or the archive's directory."`
	Dir     string `arg:"" help:"The directory to rebuild the tree in (new, or empty)."`
}

// Help is the long help of archive restore.
func (ArchiveRestoreCmd) Help() string {
	return `Rebuilds an archived tree in DIR, a new or empty directory: a repository whose
HEAD is the archived commit (from the bundle, standing on commits fetched from
the recorded remotes), and every file exactly as it was on disk: exec bits,
symbolic links, empty and binary files, any line ending, nested repositories,
and the permission bits of every file and directory as they were captured (an
archive made before custody recorded them gives files 0644 or 0755, and says
so). It works after the original repository is gone.

A restore writes only inside DIR and follows no symbolic link. An archive whose
tree, manifest or nested images would write elsewhere (an entry below a
symbolic link, an absolute path or "..", a path named twice, a device) is
refused whole before anything is written.

EXIT STATUS: 0 done, 1 error.`
}

// Run restores the archive.
func (c *ArchiveRestoreCmd) Run(a *App) error {
	e, g := a.optionalEnv()
	ref := c.Archive
	if filepath.Base(ref) != ref {
		ref = a.path(ref)
	}
	dir, err := archive.ResolveArchiveDir(e, ref)
	if err != nil {
		return err
	}
	target, err := filepath.Abs(a.path(c.Dir))
	if err != nil {
		return err
	}
	res, err := archive.RestoreArchive(a.Ctx, g, e, dir, target)
	if err != nil {
		return err
	}
	a.done(res, func(w io.Writer) {
		fmt.Fprintf(w, "restored archive %s (%d files, %d nested repositories) at HEAD %s\n%s\n", res.Archive, res.Files, res.Nested, res.Head, res.Dir)
		if res.Modes == archive.ModesNotRecorded {
			sayf(w, "archive %s records no permission bits (it was made before custody recorded them):\n\tfiles came back 0644 or 0755, directories as the umask makes them\n", res.Archive)
		}
		if len(res.ModesNotKept) > 0 {
			fmt.Fprintf(w, "the system narrowed the recorded bits of %s\n", machine.EscapeControl(strings.Join(res.ModesNotKept, ", ")))
		}
	})
	return nil
}

// optionalEnv is the repository's environment when custody runs inside an
// initialized repository, else nil; the Git is usable either way. The
// archive commands that read archives need no repository.
func (a *App) optionalEnv() (*steps.Env, *hostio.Git) {
	if e, err := a.env(false); err == nil {
		return e, e.Git
	}
	return nil, a.git()
}

// finishArchiveResult is what `custody finish --archive` did: each
// record's finish, then the archive of each tree that finished.
type finishArchiveResult = output.FinishArchiveResult

// archiveFinished captures the tree of every record out finished; a
// capture that is refused or fails is that item's refusal, and the next
// goes on.
func (a *App) archiveFinished(e *steps.Env, out []steps.Outcome) error {
	res := finishArchiveResult{Outcomes: steps.Outcomes{Items: out}, Archives: []archive.ArchiveCreated{}}
	for i, o := range out {
		if o.Refusal != nil || o.State != machine.StateFinished {
			continue
		}
		created, err := archive.CaptureArchive(a.Ctx, e, o.ID)
		if err != nil {
			var r *machine.Refusal
			if !errors.As(err, &r) {
				r = &machine.Refusal{Code: machine.CodeArchiveIncomplete, Retry: machine.CommandOn([]string{"custody", "archive", "create"}, o.ID),
					Message: fmt.Sprintf("%s finished, but its archive was not made: %v", o.ID, err)}
			}
			out[i].Outcome, out[i].Refusal = machine.OutcomeRefused, r
			continue
		}
		res.Archives = append(res.Archives, created)
	}
	a.done(res, func(w io.Writer) {
		rows := [][]string{}
		for _, o := range out {
			rows = append(rows, []string{o.ID, string(o.Outcome)})
		}
		table(w, rows)
		for _, o := range out {
			if o.Refusal != nil {
				writeRefusal(w, o.ID, o.Refusal)
			}
		}
		for _, c := range res.Archives {
			sayf(w, "archived %s as %s\n", c.Record, c.ID)
		}
		if !res.Pending() {
			fmt.Fprintln(w, "next: custody plan")
		}
	})
	return nil
}

// ArchivePruneCmd assesses and deletes archives.
type ArchivePruneCmd struct {
	Apply []string `sep:"none" name:"apply" placeholder:"NAME" complete:"archives" help:"Delete exactly these archive directories (names), each re-assessed first."`
	// StripBuildOutput rewrites patches without the build output they
	// hold instead of deleting anything.
	StripBuildOutput bool `name:"strip-build-output" help:"Delete no archive: list (or, with --apply, strip) the build output each archive's patch holds, by the rules its tree was classified by."`
}

// Help is the long help of archive prune.
func (ArchivePruneCmd) Help() string {
	return `Assesses every archive of this repository, in a fixed order: a valid manifest
whose digests hold and nothing unrecorded in the directory, the tree gone, no
nested repositories, no uncommitted changes, the remotes answering, and every
archived commit on an advertised ref (plain ancestry). Without --apply nothing
is deleted. --apply NAME re-reads and re-assesses each named archive, then
deletes its recorded files, the manifest last, and the directory only when
nothing else is in it.

--strip-build-output deletes no archive. It lists the build output each
archive's patch holds: what the tree's own classification would discard (a
Cargo target, node_modules/ beside a lockfile the index held, a virtualenv,
__pycache__/ of bytecode, build/ or .dart_tool/ beside a pubspec.yaml the index
held, a signed CACHEDIR.TAG, an approved [cleanup] disposable pattern), decided
over the index and status recorded when the archive was made, so a strip never
takes what the tree on disk would have kept. With --apply NAME it rewrites that
archive's patch without them, verified in a scratch directory beside it before
it is swapped in, and lists them in the manifest's build_output. The tree must
be gone, and an archive that does not record its tree's index and status is
kept whole.

EXIT STATUS: 0 done, 1 error, 3 a named archive was kept.`
}

// Run prunes.
func (c *ArchivePruneCmd) Run(a *App) error {
	e, err := a.mutatingEnv()
	if err != nil {
		return err
	}
	if c.StripBuildOutput {
		return runStrip(a, e, c.Apply)
	}
	res, err := archive.PruneArchives(a.Ctx, e, c.Apply)
	if err != nil {
		return err
	}
	a.done(res, func(w io.Writer) {
		if len(res.Items) == 0 {
			sayf(w, "no archives under %s\n", res.Root)
			return
		}
		for _, it := range res.Items {
			switch {
			case it.Refusal != nil:
				writeRefusal(w, "kept "+it.Name, it.Refusal)
			case it.Outcome == machine.OutcomeRemoved:
				sayf(w, "pruned %s\n", it.Name)
			default:
				sayf(w, "prunable %s\n\tto delete it: custody archive prune --apply %s\n", it.Name, machine.QuoteArg(it.Name))
			}
		}
	})
	return nil
}

// runStrip runs archive prune --strip-build-output.
func runStrip(a *App, e *steps.Env, apply []string) error {
	res, err := archive.StripArchives(a.Ctx, e, apply)
	if err != nil {
		return err
	}
	a.done(res, func(w io.Writer) {
		if len(res.Items) == 0 {
			sayf(w, "no archives under %s\n", res.Root)
			return
		}
		for _, it := range res.Items {
			switch {
			case it.Refusal != nil:
				writeRefusal(w, "kept "+it.Name, it.Refusal)
			case it.Outcome == machine.OutcomeRelocated:
				sayf(w, "stripped %s\n", it.Name)
			case len(it.Strip) == 0:
				sayf(w, "nothing to strip in %s\n", it.Name)
			default:
				sayf(w, "strippable %s\n", it.Name)
				for _, d := range it.Strip {
					sayf(w, "\t%s (%s, %d bytes)\n", d.Path, d.Kind, d.Bytes)
				}
				fmt.Fprintf(w, "\tto strip it: custody archive prune --strip-build-output --apply %s\n", machine.QuoteArg(it.Name))
			}
		}
	})
	return nil
}
