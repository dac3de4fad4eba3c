// Package observe reads git and the filesystem into machine values. It never
// decides, and it changes nothing a person wrote: a function here reads,
// except for the bounded writes listed below, each of which touches only
// custody's own files, a place its caller made for it, or git's object store
// with objects (never a ref).
//
// It is made of three subpackages it imports and that never import it
// (decision 0231): hostio (the Runner, Git, Repo, lstat and process
// identity), gitfiles (git's own files, read as git reads them: the index,
// cache tree, tree ids, refs, .git files, the worktree registry) and proof
// (the proof search against remotes). This package composes them into a
// tree's observation and keeps the process scans, filesystem walks and
// status.
//
// All external commands go through one Runner (own process group, deadline,
// bounded output, and no descendant outliving the command). Git runs with
// GIT_TERMINAL_PROMPT=0, LC_ALL=C, GIT_NO_REPLACE_OBJECTS=1, grafts off, and
// observations with GIT_OPTIONAL_LOCKS=0.
//
// # The writes, and why they are here
//
// A test (TestObserveWritesOnlyWhereDocumented) finds every function of this
// package and its subpackages that writes and requires it to be one of these; anything else that
// writes belongs in steps.
//
//   - The runner's writing entry points, Git.Mutate, Git.MutateInput,
//     Git.MutateWithEnv and Git.RunWith: the one runner, with its environment set in one place, is
//     also the one steps act through. Observe itself calls them only as
//     listed here.
//   - The worktree registry lock (lockRegistry, noteRegistryHolder:
//     <common>/custody/registry.lock, holding the holder's pid, host and
//     command) and ChangeRegistry, the one function that runs a git worktree
//     command that changes the registry, under that lock. Reads of the
//     registry take the same lock shared, so the lock lives beside them;
//     only steps call ChangeRegistry. Only an exclusive lock writes: a
//     shared one opens the lock file to read and creates nothing (a
//     repository on a read-only file system is read as usual).
//   - Objects a proof needs: ensureObjects fetches the missing commits of an
//     advertised tip with a source-only refspec and no refmap, so objects
//     arrive and no ref is written (DESIGN §5).
//   - Scratch: InitScratch, WriteScratchTree, writeLoose (TreeScan.WriteBlobs),
//     WritePatch, CreateBundle and CheckPack write only into a scratch
//     repository, index, object directory or file that the caller made for
//     the purpose and discards or seals; ownObjectsComplete makes and removes
//     its own temporary git directory. Git needs somewhere to write to answer
//     these questions; none is a person's repository.
//   - The content-hash cache (treeHashes.save, PruneHashCache): derived data
//     under <common>/custody/, written by rename, whose loss only costs time.
//     A Shared cache (apply's) also makes and removes an empty file in its
//     directory before a walk (HashCache.moment), to read a moment of the
//     filesystem's clock from the directory's ctime.
package observe
