package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/custody-sh/custody/cmd/custody/internal/output"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/steps"
	"github.com/custody-sh/custody/steps/archive"
)

// The kinds of words shell completion asks the binary for: the value of
// an argument's or flag's `complete` tag, and __complete's argument.
const (
	// completeTrees are the ids of the live worktree records.
	completeTrees = "trees"
	// completeRecords are the ids of every worktree record, tombstoned
	// ones included (the journal keeps theirs).
	completeRecords = "records"
	// completeBranches are the local branches.
	completeBranches = "branches"
	// completeArchives are the names of the archive directories.
	completeArchives = "archives"
)

// CompleteWordsCmd prints the words shell completion offers; the
// completion scripts call it, a person does not.
type CompleteWordsCmd struct {
	Kind string `arg:"" enum:"trees,records,branches,archives" help:"What to print: trees (live worktree ids), records (every worktree id), branches (local branches) or archives (archive names)."`
	Null bool   `short:"z" name:"null" help:"End each word with NUL instead of a newline."`
}

// Help is the long help of __complete.
func (CompleteWordsCmd) Help() string {
	return `Prints the words completion offers for KIND, one per line (each ended by NUL
with -z), sorted; the completion scripts of custody completion call it. It
only reads.

EXIT STATUS: 0 printed, 1 error (no repository, custody not initialized).`
}

// wordsResult is __complete's result.
type wordsResult = output.WordsResult

// Run prints the words.
func (c *CompleteWordsCmd) Run(a *App) error {
	words, err := c.words(a)
	if err != nil {
		return err
	}
	if words == nil {
		words = []string{}
	}
	end := "\n"
	if c.Null {
		end = "\x00"
	}
	a.done(wordsResult{Words: words}, func(w io.Writer) {
		var b strings.Builder
		for _, word := range words {
			b.WriteString(word + end)
		}
		_, _ = io.WriteString(w, b.String())
	})
	return nil
}

// words reads the words of c.Kind.
func (c *CompleteWordsCmd) words(a *App) ([]string, error) {
	switch c.Kind {
	case completeTrees, completeRecords:
		e, err := a.env(false)
		if err != nil {
			return nil, err
		}
		return steps.RecordIDs(e, c.Kind == completeRecords)
	case completeBranches:
		g := a.git()
		repo, err := gitfiles.Discover(a.Ctx, g, a.Dir)
		if err != nil {
			return nil, err
		}
		return gitfiles.LocalBranches(a.Ctx, g, repo)
	case completeArchives:
		root, err := archive.ArchivesRoot()
		if err != nil {
			return nil, err
		}
		return archive.ArchiveNames(root)
	}
	// kong's enum check makes this unreachable; say so plainly if not.
	return nil, &usageError{fmt.Errorf("__complete: no words of kind %q (trees, records, branches or archives)", c.Kind)}
}
