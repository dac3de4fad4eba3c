// Package migrate takes a legacy worktree layout into custody: discover
// finds the trees, plan audits each one, dispose records a person's
// choice, and apply adopts, relocates, archives or retires each tree,
// journaled so a re-run after a crash converges. It is a feature of
// package steps: it imports the steps core, and the archive feature (a
// tree disposed of by archive is captured first), never another feature.
package migrate
