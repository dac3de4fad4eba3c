package observe

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/gitfiles"
	"github.com/custody-sh/custody/observe/hostio"
)

// glanceStatusArgs is list's git status: changes, untracked files as git
// shows them by default (a directory once), the branch headers with the
// upstream counted, and what could hide a change (an fsmonitor, ignored
// submodules, status.showUntrackedFiles=no) overridden. It reports no
// ignored file: list says dirty for what git status says.
var glanceStatusArgs = []string{"-c", "core.fsmonitor=false", "-c", "diff.ignoreSubmodules=none",
	"status", "--porcelain=v2", "-z", "--branch", "--ahead-behind", "--untracked-files=normal", "--ignore-submodules=none"}

// GlanceScope is what list reads once for all the trees of one
// repository: the remote-tracking tips and the branches' upstreams, from
// git's files.
type GlanceScope struct {
	// RemoteTips holds every remote-tracking ref's tip (refs/remotes/...).
	RemoteTips map[string]string
	// Upstreams holds each branch's upstream by branch name; nil when the
	// config is not one custody reads (ask git status per tree).
	Upstreams map[string]gitfiles.Upstream
	// LocalTips holds the tips of the local branches some upstream names
	// (remote "."), by full ref name.
	LocalTips map[string]string
	// onRemote is the set of RemoteTips' commits.
	onRemote map[string]bool
	// unpushed holds, by commit, how many commits no remote-tracking ref
	// holds are reachable from it (CountUnpushed).
	unpushed map[string]int
}

// CountUnpushed counts, for each of heads at once, the commits reachable
// from it that no remote-tracking ref holds: one `git rev-list --parents
// HEADS --not --remotes` for all of them, the commits then counted per
// head from the graph it prints. Heads a remote-tracking ref holds need no
// count; without any remote-tracking ref nothing is counted. A failure
// counts nothing: each tree then counts for itself (Finish).
func (s *GlanceScope) CountUnpushed(ctx context.Context, g *hostio.Git, repo hostio.Repo, heads []string) {
	var ask []string
	for _, h := range heads {
		if h != "" && !s.onRemote[h] {
			ask = append(ask, h)
		}
	}
	if len(ask) == 0 || len(s.RemoteTips) == 0 {
		return
	}
	out, err := g.Observe(ctx, repo.MainCheckout, append(append([]string{"rev-list", "--parents"}, ask...), "--not", "--remotes", "--")...)
	if err != nil {
		return
	}
	graph, err := ParseRevListParents(out)
	if err != nil {
		return
	}
	s.unpushed = map[string]int{}
	for _, h := range ask {
		s.unpushed[h] = graph.Reachable(h)
	}
}

// ReadGlanceScope reads the scope of list's glances at repo's trees from
// git's files. Remote-tracking refs custody does not read from files
// (reftable, odd ref files) are asked of git once (`git for-each-ref`);
// a config custody does not read leaves Upstreams nil.
func ReadGlanceScope(ctx context.Context, g *hostio.Git, repo hostio.Repo) (*GlanceScope, error) {
	s := &GlanceScope{}
	tips, err := gitfiles.ReadRemoteTips(repo)
	if err != nil {
		out, gerr := g.Observe(ctx, repo.MainCheckout, "for-each-ref", "--format=%(objectname) %(refname)", "refs/remotes/")
		if gerr != nil {
			return nil, gerr
		}
		lines, perr := gitfiles.ParseRefLines(out)
		if perr != nil {
			return nil, perr
		}
		tips = map[string]string{}
		for _, l := range lines {
			tips[l.Name] = l.Object
		}
	}
	s.RemoteTips = tips
	s.onRemote = map[string]bool{}
	for _, oid := range tips {
		s.onRemote[oid] = true
	}
	if ups, err := gitfiles.ReadUpstreams(repo); err == nil {
		s.Upstreams = ups
		var local []string
		for _, u := range ups {
			if name, ok := strings.CutPrefix(u.Ref, "refs/heads/"); ok && u.Remote == "." {
				local = append(local, name)
			}
		}
		if lt, err := gitfiles.ReadBranchTips(repo, local); err == nil {
			s.LocalTips = map[string]string{}
			for n, oid := range lt {
				s.LocalTips["refs/heads/"+n] = oid
			}
		} else {
			s.Upstreams = nil // git says which is whose
		}
	}
	return s, nil
}

// Glancing is one tree's glance while it is taken: what git's files gave
// (GlanceFiles), then at most one git process (Finish).
type Glancing struct {
	rec machine.Record
	o   machine.Glance
	key string
	// done says the files told everything there is to tell.
	done bool
	// statClean says the tree is what its index records (indexStatClean);
	// indexTree is the tree id the index makes then.
	statClean bool
	ents      []gitfiles.IndexEntry
	indexTree string
	// headTree is HEAD's tree when its loose commit gave it.
	headTree string
	// upstreamKnown says the branch's upstream is known from the files:
	// o.Upstream (maybe "") and upstreamTip.
	upstreamKnown bool
	upstreamTip   string
}

// GlanceFiles reads rec's tree from git's files and the file system only:
// its path, its registration in inv, its upstream in scope, and whether
// the index's stat data shows it clean. It runs nothing.
func GlanceFiles(repo hostio.Repo, inv gitfiles.Inventory, rec machine.Record, scope *GlanceScope) *Glancing {
	gl := &Glancing{rec: rec}
	o := &gl.o
	o.HasRemotes = len(scope.RemoteTips) > 0
	pi := hostio.Lstat(rec.Path)
	o.PathState = pi.State
	if e, ok := inv.Entry(rec.Path); ok {
		o.Registered = true
		o.Head = e.Head
		o.Branch = strings.TrimPrefix(e.Branch, "refs/heads/")
		o.Locked = e.Locked
	}
	if !o.Registered || pi.State != machine.PathPresent || pi.IsSymlink || !pi.IsDir {
		gl.done = true
		return gl
	}
	gl.key = gitfiles.AdminKeyOf(repo, rec.Path)
	if gl.key == "" {
		o.StatusErr = filepath.Join(rec.Path, ".git") + " does not lead to the tree's admin entry (it is missing, or names another repository), so git cannot observe the tree"
		gl.done = true
		return gl
	}
	admin := repo.AdminDir(gl.key)
	worktreeConfig := hostio.Lstat(filepath.Join(admin, "config.worktree")).State != machine.PathAbsent
	switch {
	case o.Branch == "":
		gl.upstreamKnown = true
	case scope.Upstreams != nil && !worktreeConfig:
		gl.upstreamKnown = true
		if u, ok := scope.Upstreams[o.Branch]; ok {
			if u.Ref == "" {
				gl.upstreamKnown = false // a remote whose refspecs custody does not map
				break
			}
			o.Upstream = shortRef(u.Ref)
			gl.upstreamTip = scope.RemoteTips[u.Ref]
			if u.Remote == "." {
				gl.upstreamTip = scope.LocalTips[u.Ref]
			}
			if gl.upstreamTip == "" {
				o.Upstream, o.UpstreamGone = "", true
			}
		}
	}
	format := gitfiles.FormatOf(o.Head)
	if format == "" || !ownedBySelf(rec.Path, filepath.Join(rec.Path, ".git"), admin, repo.CommonDir) {
		return gl
	}
	indexPath := filepath.Join(admin, "index")
	before, err := os.Lstat(indexPath)
	if err != nil {
		return gl
	}
	idx, err := gitfiles.ReadIndexFileWhole(indexPath)
	if err != nil {
		return gl
	}
	if after, err := os.Lstat(indexPath); err != nil || !after.ModTime().Equal(before.ModTime()) || !os.SameFile(before, after) {
		return gl // rewritten while it was read
	}
	if ok, _ := indexStatClean(rec.Path, idx, uint32(before.ModTime().Unix())); !ok {
		return gl
	}
	tree, _, err := gitfiles.IndexTrees(format, idx.Ents)
	if err != nil {
		return gl
	}
	gl.statClean, gl.ents, gl.indexTree = true, idx.Ents, tree
	gl.headTree, _ = gitfiles.LooseCommitTree(filepath.Join(repo.CommonDir, "objects"), o.Head)
	return gl
}

// NeedsCount is the commit whose unpushed commits the glance would count
// ("" when none): HEAD, when its branch has no upstream (or one that is
// gone) and no remote-tracking ref holds it. The caller counts them for
// every tree at once (GlanceScope.CountUnpushed).
func (gl *Glancing) NeedsCount() string {
	if gl.done || !gl.upstreamKnown || gl.o.Upstream != "" || !gl.o.HasRemotes {
		return ""
	}
	return gl.o.Head
}

// NeedsTree is the commit whose tree the glance needs from git to finish
// without a process of its own ("" when none): HEAD's, when the index
// shows the tree clean and HEAD's commit is not a loose object. The caller
// asks git once for all of them (gitfiles.CommitTrees).
func (gl *Glancing) NeedsTree() string {
	if gl.statClean && gl.headTree == "" {
		return gl.o.Head
	}
	return ""
}

// Finish completes the glance with at most one git process: none when the
// index shows the tree clean, its tree is HEAD's (trees, by commit, holds
// what NeedsTree asked for) and its HEAD is where a remote-tracking ref
// or its upstream is; one git rev-list to count its commits when it is
// clean but elsewhere; one git status otherwise (which counts the commits
// against an upstream too). A failure is in StatusErr, never returned.
func (gl *Glancing) Finish(ctx context.Context, g *hostio.Git, repo hostio.Repo, scope *GlanceScope, trees map[string]string) machine.Glance {
	o := gl.o
	if gl.done {
		return o
	}
	if gl.headTree == "" {
		gl.headTree = trees[o.Head]
	}
	if gl.statClean && gl.upstreamKnown && gl.headTree != "" && gl.headTree == gl.indexTree {
		o.StatusKnown, o.ProvenClean, o.ObservedWith = true, true, "files"
		gl.countFromFiles(ctx, g, repo, scope, &o)
		if o.Counted && o.Ahead == 0 && gl.rec.State == machine.StateFinished {
			files, err := gitfiles.ReadAdminEntry(repo.AdminDir(gl.key))
			if err != nil {
				o.Hidden = 1
			} else {
				o.Hidden = len(machine.AdminHidden(repo.AdminDir(gl.key), gl.rec.Path, files))
			}
		}
		return o
	}
	o.ObservedWith = "status"
	out, err := g.Observe(ctx, gl.rec.Path, glanceStatusArgs...)
	if err != nil {
		o.StatusErr = err.Error()
		return o
	}
	st, err := ParseStatus(out)
	if err != nil {
		o.StatusErr = err.Error()
		return o
	}
	sb, err := ParseStatusBranch(out)
	if err != nil {
		o.StatusErr = err.Error()
		return o
	}
	o.StatusKnown = true
	o.Changes = machine.GlanceChanges{Changed: len(st.Changed), Staged: st.Staged, Untracked: len(st.Untracked), Unmerged: len(st.Unmerged)}
	switch {
	case sb.HasAB:
		o.Upstream, o.UpstreamGone = sb.Upstream, false
		o.Counted, o.Ahead, o.Behind = true, sb.Ahead, sb.Behind
	case sb.Upstream != "":
		o.Upstream, o.UpstreamGone = "", true
		fallthrough
	default:
		if n, ok := scope.unpushedOf(o.Head); ok {
			o.Counted, o.Ahead = true, n
		}
	}
	return o
}

// unpushedOf is how many commits reachable from head no remote-tracking
// ref holds, when known: 0 when one holds head, else CountUnpushed's.
func (s *GlanceScope) unpushedOf(head string) (int, bool) {
	if s.onRemote[head] {
		return 0, true
	}
	n, ok := s.unpushed[head]
	return n, ok
}

// countFromFiles counts a tree's commits that git's files showed clean:
// against its upstream (nothing to count when HEAD is the upstream's tip,
// else one git rev-list), else against every remote (nothing when a
// remote-tracking ref holds HEAD; what CountUnpushed counted for every
// tree at once; one git rev-list when that failed).
func (gl *Glancing) countFromFiles(ctx context.Context, g *hostio.Git, repo hostio.Repo, scope *GlanceScope, o *machine.Glance) {
	switch {
	case o.Upstream != "" && gl.upstreamTip == o.Head:
		o.Counted = true
	case o.Upstream != "":
		o.ObservedWith = "rev-list"
		out, err := g.Observe(ctx, repo.MainCheckout, "rev-list", "--left-right", "--count", o.Head+"..."+gl.upstreamTip, "--")
		if err == nil {
			o.Ahead, o.Behind, err = parseLeftRight(out)
		}
		o.Counted = err == nil
		noteCountErr(o, err)
	case len(scope.RemoteTips) == 0:
	default:
		if n, ok := scope.unpushedOf(o.Head); ok {
			o.Counted, o.Ahead = true, n
			return
		}
		o.ObservedWith = "rev-list"
		out, err := g.Observe(ctx, repo.MainCheckout, "rev-list", "--count", o.Head, "--not", "--remotes", "--")
		if err == nil {
			o.Ahead, err = parseCount(out)
		}
		o.Counted = err == nil
		noteCountErr(o, err)
	}
}

// noteCountErr keeps a count's failure beside a known status: the word is
// then "unpushed" without a count, and --json says why.
func noteCountErr(o *machine.Glance, err error) {
	if err != nil {
		o.StatusErr = "counting commits: " + err.Error()
	}
}

// shortRef is ref as git status names an upstream: without refs/remotes/
// or refs/heads/.
func shortRef(ref string) string {
	if s, ok := strings.CutPrefix(ref, "refs/remotes/"); ok {
		return s
	}
	return strings.TrimPrefix(ref, "refs/heads/")
}
