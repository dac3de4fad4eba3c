package main

import (
	"errors"
	"fmt"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/writable"
)

// refusedUnwritable is a command that writes, refused before it wrote
// anything because the repository's custody state cannot be written there
// (env's check, docs/decisions/0228-read-only-repositories.md).
type refusedUnwritable struct {
	err     error // a *writable.Error
	command string
}

func (r *refusedUnwritable) Error() string {
	return fmt.Sprintf("%v, and custody %s writes there; nothing was changed", r.err, r.command)
}

func (r *refusedUnwritable) Unwrap() error { return r.err }

// readersWork names the commands that work on a read-only repository, for
// the paragraph that refuses one that writes.
const readersWork = "the commands that only read (list, show, plan -o FILE elsewhere, journal, doctor, status and list commands) work here as they are"

// unwritableBody is the one paragraph of an error whose cause is that
// custody could not write where it must (writable.Classify): the code
// read-only-file-system (or not-writable, for permissions), the exact path,
// what was changed (nothing, when the command was refused before writing or
// only reads), what to do, and the command again as the retry.
func unwritableBody(err error, w *writable.Error, inv invocation) errorBody {
	code := machine.CodeReadOnlyFileSystem
	if !w.ReadOnly {
		code = machine.CodeNotWritable
	}
	fix := "make it writable"
	switch {
	case w.ReadOnly && w.Mount != "":
		fix = fmt.Sprintf("remount %s read-write, or run custody in a writable copy of the repository", w.Mount)
	case w.ReadOnly:
		fix = "remount its file system read-write, or run custody in a writable copy of the repository"
	default:
		fix = fmt.Sprintf("run custody as a user who may write %s (its owner)", w.Path)
	}
	var refused *refusedUnwritable
	var msg string
	switch {
	case errors.As(err, &refused):
		msg = fmt.Sprintf("%s. To run it, %s; %s.", refused.Error(), fix, readersWork)
	case inv.access == reads:
		msg = fmt.Sprintf("%v; custody %s changed nothing in the repository. To write there, %s.", err, inv.command, fix)
	default:
		msg = fmt.Sprintf("%v; custody %s stopped at this write. To run it, %s.", err, inv.command, fix)
	}
	return errorBody{Code: string(code), Message: msg, Path: w.Path, Retry: inv.again()}
}
