// Package land is custody land: it integrates a tree's branch into the
// default branch of the remote that proves it (fast-forward, squash,
// rebase or merge, computed with git merge-tree and commit-tree, never in
// a checkout), pushes the result under a compare-and-swap lease on the
// exact tip it integrated against, journals the landing, and then removes
// the tree on the fresh proof, at once or through a plan file apply
// carries out. An intent is journaled before the push, so a run cut short
// anywhere is completed by the next: a push that landed is recorded, one
// that did not is abandoned and integrated afresh.
package land
