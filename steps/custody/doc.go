// Package custody embeds custody in a Go program: the custody command's
// workflows (new, finish, plan, apply, resume, list, show) as methods with
// typed results, over one repository's custody.
//
// # Embedding
//
// Open the custody of the repository a directory belongs to, then call
// its methods as the custody command would run its commands:
//
//	c, err := custody.Open(ctx, dir, custody.Options{})
//	tree, err := c.New(ctx, "feature", custody.NewOptions{}) // a managed worktree at tree.Path
//	// ... work in tree.Path, commit, push tree.Branch ...
//	_, err = c.Finish(ctx, tree.ID)
//	plan, err := c.Plan(ctx)       // which trees may go, and why each other stays
//	res, err := c.Apply(ctx, plan) // exactly what plan said, or stale
//
// Open makes the state file (<git-common-dir>/custody/state.db) on first
// use. Nothing else needs setting up: New makes the managed root and
// excludes it from git, as custody init would.
//
// # The caller's duties
//
//  1. Review a plan before applying it. Plan writes nothing; Apply removes
//     only the trees plan proved, each observed afresh first.
//  2. Match Apply's error. A tree that changed since plan is kept, and
//     Apply returns its result with a *StaleError (errors.Is ErrStale):
//     plan again. Every other "no" is a *Refusal (a stable Code, the exact
//     Path, the Retry command), either returned as the error or carried by
//     an item of the result; errors.Is(err, code.AsError()) matches one by
//     its code.
//  3. Use one Custody from one goroutine at a time. Several processes and
//     Custody values may work on one repository at once: the state file's
//     lock orders them, each wait bounded by Options.LockTimeout.
//
// A Custody holds no lock and no open file between calls (the state file
// is opened per transaction), so there is nothing to close.
//
// Every mutating method (New, Finish, Apply) first settles whatever an
// interrupted custody left (Resume), as every mutating custody command
// does, and reports each settled intent to Options.Output.
//
// # Ports
//
// custody reaches the world through four ports, each an interface in
// Options whose nil value is the real one:
//
//   - GitRunner is handed every git command with the function that runs it
//     for real: record, trace or time git there.
//   - Clock is the time written into records and the journal.
//   - ProcessScanner says which processes use a tree (a tree in use is
//     kept).
//   - Output receives progress and the automatic resume's reports; results
//     are always returned, never written.
//
// # What stays inside
//
// The workflows themselves (package steps), the decisions (package
// machine), the observations (package observe) and the store are not
// part of this package's surface: the result types are the core's own,
// under names of this package (the values the custody command's own
// commands get back), so nothing is translated on the way out. The
// environment a Custody runs the workflows in (steps.Env) is not exposed.
//
// # Below the façade
//
// Locate, SiteOf, NewGit, NewEnv and Register are how an environment is
// built: NewEnv is the one constructor of steps.Env, and Register the one
// registration of the features the core does not import (resources,
// archives). Open uses them, and so does the custody command, which builds
// the environment of each of its commands with NewEnv. A program that
// needs a workflow this package does not offer builds an environment the
// same way and calls package steps itself, outside the façade's promises.
package custody
