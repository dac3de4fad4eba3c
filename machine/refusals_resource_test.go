package machine

import (
	"errors"
	"testing"
)

func TestResourceRefusals(t *testing.T) {
	t.Parallel()
	const (
		id   = "x-1a2b3c"
		path = "/r/.worktrees/x-1a2b3c"
	)
	rec := Record{ID: id, Path: path}
	failed := Resource{ID: id + "/db", Name: "db", Handle: "repo-x-db", Path: path, Evidence: ResourceEvidence{Outcome: "destroy-failed", ExitCode: 5, Output: "busy"}}
	checkRefusals(t, []refusalCase{
		{"ensure failed", EnsureFailedRefusal(id, failed, 3, "no socket"), &Refusal{Code: CodeResourceFailed, Path: path, Retry: "custody resource ensure " + id,
			Message: "ensure of db (repo-x-db) exited 3: no socket"}},
		{"adopted, not made", AdoptedResourceNotMadeRefusal(rec, "db", failed), &Refusal{Code: CodeResourceFailed, Path: path, Retry: "custody -C " + path + " teardown",
			Message: "resource db (repo-x-db) of the adopted tree " + id + " was not made: its create exited 5: busy"}},
		{"adopted, a path to quote", AdoptedResourceFailedRefusal(Record{ID: id, Path: "/w/it's"}, "db", failed), &Refusal{Code: CodeResourceFailed, Path: "/w/it's",
			Retry: `custody -C '/w/it'\''s' teardown`, Message: "resource db (repo-x-db) of the adopted tree " + id + ": its create exited 5: busy"}},
		{"teardown retry, a path with a newline", &Refusal{Retry: TeardownRetry("/w/a\nb")}, &Refusal{Retry: `custody -C "$(printf -- '/w/a\012b')" teardown`}},
		{"create failed", CreateResourceFailedRefusal(rec, "db", failed), &Refusal{Code: CodeResourceFailed, Path: path, Retry: "custody resource ensure " + id,
			Message: "resource db (repo-x-db) create exited 5: busy"}},
		{"teardown failed", TeardownFailedRefusal(failed), &Refusal{Code: CodeResourceFailed, Path: path, Retry: "custody resource gc",
			Message: "resource db (repo-x-db) destroy exited 5: busy; the ledger keeps it for GC"}},
		{"destroy failed", DestroyFailedRefusal(failed), &Refusal{Code: CodeResourceFailed, Path: path, Retry: "custody resource gc",
			Message: "destroy of " + id + "/db (repo-x-db) exited 5: busy"}},
		{"resumed command failed", ResumedResourceFailedRefusal(Resource{ID: id + "/db", Path: path}, failed), &Refusal{Code: CodeResourceFailed, Path: path, Retry: "custody resource gc",
			Message: "destroy-failed of " + id + "/db exited 5: busy"}},
		{"unexpanded token", UnexpandedTokenRefusal("/w/repo/custody.toml", "db", "prot"), &Refusal{Code: CodeUnexpandedToken, Path: "/w/repo/custody.toml", Retry: "edit custody.toml",
			Message: "resource db: @prot@ is not a token custody knows, so its command is refused, never half-run"}},
		{"unsafe token", UnsafeTokenRefusal("/w/repo/custody.toml", "db", "create", &UnsafeTokenError{Token: "@path@", Context: "a quoted heredoc"}), &Refusal{Code: CodeUnsafeToken,
			Path: "/w/repo/custody.toml", Retry: "edit custody.toml",
			Message: `resource db: in its create command, @path@ stands in a quoted heredoc, where its value would be read as code; write "$CUSTODY_PATH" (custody sets it for every resource command) or move the token out`}},
		{"group running", GroupRunningRefusal(path, errors.New("process group 42 of the create is still running")), &Refusal{Code: CodeInProgress, Path: path, Retry: "custody resume",
			Message: "process group 42 of the create is still running"}},
		{"no ledger entry", NoLedgerEntryRefusal("x/db"), &Refusal{Code: CodeUnknownRecord, Retry: "custody plan", Message: "no ledger entry x/db"}},
		{"ledger entry changed", LedgerEntryChangedRefusal("x/db", path), &Refusal{Code: CodeStale, Path: path, Retry: "custody plan",
			Message: "ledger entry x/db changed since plan"}},
		{"ledger entry busy", LedgerEntryBusyRefusal("x/db", path), &Refusal{Code: CodeInProgress, Path: path, Retry: "custody resource gc",
			Message: "ledger entry x/db changed while GC looked at it; another custody is acting on it"}},
	})
}
