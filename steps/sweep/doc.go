// Package sweep is custody sweep: the unattended pass that keeps a
// fleet's disks in check. For every worktree idle longer than a threshold
// (no live lease, no process in it, no entry changed) it discards the
// build output plan's classifier recognises there, re-checked just before
// each deletion and deleted entry by entry so that anything written after
// the check stays, and it archives the unpublished work of finished trees
// and trees whose lease expired. It never removes a tree and changes no
// record's state but through an archive's own transitions. It also writes
// and removes the daily timer (a systemd user timer, a launchd agent)
// that runs it.
package sweep
