package machine

import "fmt"

// The refusals of per-worktree resources: a command that failed, a
// command custody will not freeze, and a ledger entry that changed or is
// being acted on.

// EnsureFailedRefusal reports that the ensure command of resource r, of
// record id, exited code with output out.
func EnsureFailedRefusal(id string, r Resource, code int, out string) *Refusal {
	return &Refusal{Code: CodeResourceFailed, Path: r.Path, Retry: CommandOn([]string{"custody", "resource", "ensure"}, id),
		Message: fmt.Sprintf("ensure of %s (%s) exited %d: %s", r.Name, r.Handle, code, out)}
}

// TeardownRetry tears the tree at path down, with the resources it has,
// from wherever it is pasted: while the tree exists, orphan GC would call
// its resources live.
func TeardownRetry(path string) string {
	return "custody -C " + QuoteArg(path) + " teardown"
}

// AdoptedResourceNotMadeRefusal reports that resource name (r) of the
// adopted tree rec was not made: its create failed before, as its
// evidence records.
func AdoptedResourceNotMadeRefusal(rec Record, name string, r Resource) *Refusal {
	return &Refusal{Code: CodeResourceFailed, Path: rec.Path, Retry: TeardownRetry(rec.Path),
		Message: fmt.Sprintf("resource %s (%s) of the adopted tree %s was not made: its create exited %d: %s", name, r.Handle, rec.ID, r.Evidence.ExitCode, r.Evidence.Output)}
}

// AdoptedResourceFailedRefusal reports that the create of resource name
// (r) of the adopted tree rec failed, as its evidence records.
func AdoptedResourceFailedRefusal(rec Record, name string, r Resource) *Refusal {
	return &Refusal{Code: CodeResourceFailed, Path: rec.Path, Retry: TeardownRetry(rec.Path),
		Message: fmt.Sprintf("resource %s (%s) of the adopted tree %s: its create exited %d: %s", name, r.Handle, rec.ID, r.Evidence.ExitCode, r.Evidence.Output)}
}

// CreateResourceFailedRefusal reports that the create of resource name
// (r) of record rec failed, as its evidence records.
func CreateResourceFailedRefusal(rec Record, name string, r Resource) *Refusal {
	return &Refusal{Code: CodeResourceFailed, Path: rec.Path, Retry: CommandOn([]string{"custody", "resource", "ensure"}, rec.ID),
		Message: fmt.Sprintf("resource %s (%s) create exited %d: %s", name, r.Handle, r.Evidence.ExitCode, r.Evidence.Output)}
}

// TeardownFailedRefusal reports that the destroy of resource r failed, as
// its evidence records: the ledger keeps it for GC.
func TeardownFailedRefusal(r Resource) *Refusal {
	return &Refusal{Code: CodeResourceFailed, Path: r.Path, Retry: "custody resource gc",
		Message: fmt.Sprintf("resource %s (%s) destroy exited %d: %s; the ledger keeps it for GC", r.Name, r.Handle, r.Evidence.ExitCode, r.Evidence.Output)}
}

// DestroyFailedRefusal reports that GC's destroy of resource r failed, as
// its evidence records.
func DestroyFailedRefusal(r Resource) *Refusal {
	return &Refusal{Code: CodeResourceFailed, Path: r.Path, Retry: "custody resource gc",
		Message: fmt.Sprintf("destroy of %s (%s) exited %d: %s", r.ID, r.Handle, r.Evidence.ExitCode, r.Evidence.Output)}
}

// ResumedResourceFailedRefusal reports that the command resume ran again
// for resource r failed, as next, the entry it left, records.
func ResumedResourceFailedRefusal(r, next Resource) *Refusal {
	return &Refusal{Code: CodeResourceFailed, Path: r.Path, Retry: "custody resource gc",
		Message: fmt.Sprintf("%s of %s exited %d: %s", next.Evidence.Outcome, r.ID, next.Evidence.ExitCode, next.Evidence.Output)}
}

// UnexpandedTokenRefusal refuses resource name of the configuration file
// config, whose command holds @tok@, a token custody does not know.
func UnexpandedTokenRefusal(config, name, tok string) *Refusal {
	return &Refusal{Code: CodeUnexpandedToken, Path: config,
		Retry: "edit custody.toml", Message: fmt.Sprintf("resource %s: @%s@ is not a token custody knows, so its command is refused, never half-run", name, tok)}
}

// UnsafeTokenRefusal refuses resource name of the configuration file
// config, whose what command (create, destroy, ensure) holds a token
// where its value would be read as code (ute).
func UnsafeTokenRefusal(config, name, what string, ute *UnsafeTokenError) *Refusal {
	return &Refusal{Code: CodeUnsafeToken, Path: config, Retry: "edit custody.toml",
		Message: fmt.Sprintf("resource %s: in its %s command, %s", name, what, ute.Error())}
}

// GroupRunningRefusal refuses acting on the resource at path while the
// process group of a create a killed custody left is still running (err
// says which).
func GroupRunningRefusal(path string, err error) *Refusal {
	return &Refusal{Code: CodeInProgress, Path: path, Retry: "custody resume", Message: err.Error()}
}

// NoLedgerEntryRefusal refuses id, which names no ledger entry.
func NoLedgerEntryRefusal(id string) *Refusal {
	return &Refusal{Code: CodeUnknownRecord, Retry: "custody plan", Message: fmt.Sprintf("no ledger entry %s", id)}
}

// LedgerEntryChangedRefusal refuses reclaiming ledger entry id (path),
// which changed since the plan reviewed it.
func LedgerEntryChangedRefusal(id, path string) *Refusal {
	return &Refusal{Code: CodeStale, Path: path, Retry: "custody plan",
		Message: fmt.Sprintf("ledger entry %s changed since plan", id)}
}

// LedgerEntryBusyRefusal refuses reclaiming ledger entry id (path), which
// another custody changed while GC looked at it.
func LedgerEntryBusyRefusal(id, path string) *Refusal {
	return &Refusal{Code: CodeInProgress, Path: path, Retry: "custody resource gc",
		Message: fmt.Sprintf("ledger entry %s changed while GC looked at it; another custody is acting on it", id)}
}
