// Package archive keeps the archives of unpublished work: capture a tree
// into a sealed archive, verify, list, restore, strip and prune archives,
// and supply removal's proof kind archive (Removal, steps.Archives). It is
// a feature of package steps: it imports the steps core, never another
// feature; custody.Register (steps/custody) registers it (Removal in steps.Env.Archives,
// Workflow in steps.Env.Workflows).
package archive
