package proof

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
)

// Tip is one ref a remote advertised just now.
type Tip struct {
	Remote string
	Ref    string
	Commit string
	// Default is true for the branch the remote's HEAD names.
	Default bool
	// Target is the commit Commit names (an annotated tag peeled), as
	// Advertise resolved it; empty means Commit itself.
	Target string
}

// target is the commit t names.
func (t Tip) target() string {
	if t.Target != "" {
		return t.Target
	}
	return t.Commit
}

// RemoteView is one fresh advertisement of every configured remote. Local
// Remote-tracking refs and local tags are never part of it.
type RemoteView struct {
	Remotes []string
	// Tips are the refs of remotes that hold whole history: what each
	// reaches is all on that remote.
	Tips     []Tip
	Failures []machine.RemoteFailure
	// Push is where a retry pushes a tree's commits so that a remote
	// custody reads advertises them afterwards.
	Push *machine.PushTarget
	// shallow holds what shallow local remotes advertised: they prove
	// only the history they hold (proveShallow), never as Tips do.
	shallow []shallowTips
	// sources are the remotes as custody asked them, by name.
	sources map[string]*remoteSource
	// patches holds the patch ids proofs computed against this view, so
	// that every tree of one plan shares them; nil computes afresh. It is
	// safe for concurrent use.
	patches *patchCache
}

// Evidence returns the view as recorded in an observation.
func (v *RemoteView) Evidence() machine.RemoteEvidence {
	if v == nil {
		return machine.RemoteEvidence{}
	}
	return machine.RemoteEvidence{Remotes: v.Remotes, Unavailable: v.Failures, Push: v.Push}
}

// URL returns the URL git reads for remote, after its rewrites, as a
// record may keep it (credentials removed), and whether the view has it.
func (v *RemoteView) URL(remote string) (string, bool) {
	if v == nil {
		return "", false
	}
	s, ok := v.sources[remote]
	if !ok || s.read == "" {
		return "", false
	}
	return machine.RedactCredentials(s.read), true
}

// AskArgs is a git command line that asks what custody asked of remote:
// the remote's own settings, sub (the subcommand and its flags), "--",
// the URL value custody gave git for it, and rest. It is false when the
// view has no such remote.
func (v *RemoteView) AskArgs(remote string, sub []string, rest ...string) ([]string, bool) {
	if v == nil {
		return nil, false
	}
	s, ok := v.sources[remote]
	if !ok {
		return nil, false
	}
	return s.args(sub, rest...), true
}

// Advertise asks every configured remote for its refs (`git ls-remote
// --refs`), fetches advertised commits missing locally with source-only
// refspecs into no local ref, and returns the tips whose objects are present,
// default branches first. A remote that does not answer within its deadline
// is listed in Failures, never treated as empty; every remote is asked once,
// in parallel, so a hung one costs one bounded wait per call, whatever the
// number of trees it speaks for; and a remote that did not answer is not
// asked again by the same Git (one command), so a command that advertises
// again for each tree's final observation waits for it once.
//
// The remotes are read from git's configuration as git reads it (`git
// config -z --list`), never from text printed for a person: a URL holding
// a newline is one URL. The URL value git fetches from (a remote's first
// url) is identified, advertised and fetched from, always that same value
// (docs/decisions/0223-remotes-read-from-config.md).
//
// A local remote is identified by the device and inode of its git dir
// (docs/decisions/0014-remote-identity.md): one that is this repository in
// disguise (a symlink, bind mount, file:// URL, relative path, the main
// checkout or a linked worktree) proves nothing and is a failure naming it;
// one that borrows this repository's objects through
// objects/info/alternates counts only if its own object store holds every
// object its tips reach; one that is shallow proves only the history it
// holds.
func Advertise(ctx context.Context, g *hostio.Git, repo hostio.Repo) (*RemoteView, error) {
	listing, err := g.ConfigList(ctx, repo)
	return AdvertiseListed(ctx, g, repo, listing, err)
}

// AdvertiseNamed is Advertise asking only the remotes names lists: the
// view, its push advice and its failures speak of those alone, so a
// remote that does not answer costs nothing to a command whose work only
// the named remotes prove. When names is empty, or names a remote the
// configuration no longer has (or no longer lets custody ask), every
// remote is asked, as Advertise does: the named ones cannot be all that
// proves the work.
func AdvertiseNamed(ctx context.Context, g *hostio.Git, repo hostio.Repo, names []string) (*RemoteView, error) {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	listing, err := g.ConfigList(ctx, repo)
	return advertise(ctx, g, repo, want, listing, err)
}

// AdvertiseListed is Advertise reading the remotes from listing, the
// configuration a caller already read (hostio.ConfigList), or failing with
// listErr, the error reading it failed with.
func AdvertiseListed(ctx context.Context, g *hostio.Git, repo hostio.Repo, listing []byte, listErr error) (*RemoteView, error) {
	return advertise(ctx, g, repo, nil, listing, listErr)
}

// advertise is Advertise over the remotes in want, or over every remote
// when want is empty or names one the configuration lacks, reading the
// configuration from listing (or failing with listErr, reading it failed).
func advertise(ctx context.Context, g *hostio.Git, repo hostio.Repo, want map[string]bool, listing []byte, listErr error) (*RemoteView, error) {
	if listErr != nil {
		return nil, fmt.Errorf("read the remotes: %w", listErr)
	}
	cfg, srcs, err := readRemoteConfig(listing)
	if err != nil {
		return nil, err
	}
	srcs = onlyNamed(srcs, want)
	v := &RemoteView{patches: newPatchCache(), sources: map[string]*remoteSource{}}
	for _, s := range srcs {
		v.Remotes = append(v.Remotes, s.name)
		v.sources[s.name] = s
	}
	timeout := g.RemoteBound()
	type answer struct {
		refs []RemoteRef
		err  error
		head string // the ref the remote's HEAD points at, if it says
	}
	answers := make([]answer, len(srcs))
	var wg sync.WaitGroup
	for i, s := range srcs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// What git reads for the remote is settled, and a local
			// repository identified, in-process, before anything is
			// asked: one that is this repository, or cannot be
			// identified, is not asked at all.
			if err := s.resolve(ctx, g, repo, cfg); err != nil {
				answers[i].err = err
				return
			}
			if s.refused != nil {
				return
			}
			if why, ok := g.Unanswered.Get(s.memoKey()); ok {
				answers[i].err = errors.New(why + " (asked once in this command)")
				return
			}
			// One ls-remote says what the remote holds and where its HEAD
			// points (the default branch, only to try it first): the refs
			// are the lines --refs would print (refsOnly).
			rctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			b, err := g.Observe(rctx, repo.MainCheckout, s.args([]string{"ls-remote", "--symref"})...)
			if err != nil {
				// A remote that ran out of time says so itself
				// (*TimeoutError: the command, "no answer within").
				answers[i].err = s.askError(err)
			} else {
				answers[i].head = symrefHead(b)
				answers[i].refs, answers[i].err = ParseLsRemote(refsOnly(b))
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	failed := map[string]bool{}
	shallowAt := map[string]int{}
	for i, s := range srcs {
		if s.refused != nil {
			v.Failures = append(v.Failures, *s.refused)
			failed[s.name] = true
			continue
		}
		if answers[i].err != nil {
			g.Unanswered.Put(s.memoKey(), answers[i].err.Error())
			v.Failures = append(v.Failures, machine.RemoteFailure{Remote: s.name, Error: answers[i].err.Error()})
			failed[s.name] = true
			continue
		}
		for _, ref := range answers[i].refs {
			t := Tip{Remote: s.name, Ref: ref.Name, Commit: ref.Commit, Default: ref.Name == answers[i].head}
			if s.shallow == nil {
				v.Tips = append(v.Tips, t)
				continue
			}
			j, ok := shallowAt[s.name]
			if !ok {
				j = len(v.shallow)
				shallowAt[s.name] = j
				v.shallow = append(v.shallow, shallowTips{remote: s.name, repo: s.shallow})
			}
			v.shallow[j].tips = append(v.shallow[j].tips, t)
		}
	}
	if err := v.dropBorrowed(ctx, g, srcs, failed); err != nil {
		return nil, err
	}
	if err := v.ensureObjects(ctx, g, repo, failed); err != nil {
		return nil, err
	}
	sort.SliceStable(v.Tips, func(i, j int) bool { return tipRank(v.Tips[i]) < tipRank(v.Tips[j]) })
	for _, st := range v.shallow {
		sort.SliceStable(st.tips, func(a, b int) bool { return tipRank(st.tips[a]) < tipRank(st.tips[b]) })
	}
	v.Push = pushTarget(cfg, srcs, failed, repo)
	return v, nil
}

// onlyNamed returns the sources want names, or all of srcs when want is
// empty or names one srcs lacks.
func onlyNamed(srcs []*remoteSource, want map[string]bool) []*remoteSource {
	if len(want) == 0 {
		return srcs
	}
	var kept []*remoteSource
	for _, s := range srcs {
		if want[s.name] {
			kept = append(kept, s)
		}
	}
	if len(kept) != len(want) {
		return srcs
	}
	return kept
}

// dropBorrowed removes the tips of every remote that borrows this
// repository's objects unless the remote's own object store holds every
// object they reach, and records such a remote as a failure: objects it
// reads from this repository are not elsewhere. A shallow remote that
// borrows never holds every object its tips reach (its history stops at
// its boundary), so it is dropped too.
func (v *RemoteView) dropBorrowed(ctx context.Context, g *hostio.Git, srcs []*remoteSource, failed map[string]bool) error {
	commits := map[string][]string{}
	for _, t := range v.Tips {
		commits[t.Remote] = append(commits[t.Remote], t.Commit)
	}
	for _, st := range v.shallow {
		for _, t := range st.tips {
			commits[t.Remote] = append(commits[t.Remote], t.Commit)
		}
	}
	bad := map[string]bool{}
	for _, s := range srcs {
		if s.borrows == "" || failed[s.name] || len(commits[s.name]) == 0 {
			continue
		}
		whole, err := ownObjectsComplete(ctx, g, s.borrows, commits[s.name])
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			whole = false
		}
		if !whole {
			bad[s.name] = true
			failed[s.name] = true
			v.Failures = append(v.Failures, remoteRefusal(s.name, s.url, "borrows this repository's objects through "+
				filepath.Join(s.borrows, "objects", "info", "alternates")+" and does not hold every object its refs reach itself, so it proves nothing"))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	kept := v.Tips[:0]
	for _, t := range v.Tips {
		if !bad[t.Remote] {
			kept = append(kept, t)
		}
	}
	v.Tips = kept
	keptShallow := v.shallow[:0]
	for _, st := range v.shallow {
		if !bad[st.remote] {
			keptShallow = append(keptShallow, st)
		}
	}
	v.shallow = keptShallow
	return nil
}

// ensureObjects fetches advertised commits that are missing locally, by
// ref name with a source-only refspec and an empty refmap (so no local ref
// is written, not even a remote-tracking one), from the URL value the
// Remote was advertised from, then drops tips that still do not name a
// Commit here: missing objects, and tags of blobs or trees, cannot prove
// anything.
func (v *RemoteView) ensureObjects(ctx context.Context, g *hostio.Git, repo hostio.Repo, failed map[string]bool) error {
	missing, err := unresolved(ctx, g, repo, v.Tips, "")
	if err != nil {
		return err
	}
	byRemote := map[string][]string{}
	for _, t := range v.Tips {
		if missing[t.Commit] && !Synthetic(t.Ref) {
			byRemote[t.Remote] = append(byRemote[t.Remote], t.Ref)
		}
	}
	for _, remote := range v.Remotes {
		refs := byRemote[remote]
		if len(refs) == 0 {
			continue
		}
		s := v.sources[remote]
		if why, ok := g.Unanswered.Get(s.memoKey()); ok {
			v.Failures = append(v.Failures, machine.RemoteFailure{Remote: remote, Error: why + " (asked once in this command)"})
			failed[remote] = true
			continue
		}
		if g.NoFetch != nil {
			v.Failures = append(v.Failures, machine.RemoteFailure{Remote: remote,
				Error: fmt.Sprintf("%d advertised ref(s) name commits this repository lacks, and custody cannot fetch them: %v; fetch them where the repository is writable, then plan again", len(refs), g.NoFetch)})
			continue
		}
		fctx, cancel := context.WithTimeout(ctx, g.RemoteBound())
		_, err := g.Mutate(fctx, repo.MainCheckout, s.args([]string{"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--refmap=", "--no-recurse-submodules"}, refs...)...)
		cancel()
		if err != nil && ctx.Err() == nil {
			why := "fetch advertised commits: " + s.askError(err).Error()
			g.Unanswered.Put(s.memoKey(), why)
			v.Failures = append(v.Failures, machine.RemoteFailure{Remote: remote, Error: why})
			failed[remote] = true
		}
	}
	peeled, err := peel(ctx, g, repo, v.Tips)
	if err != nil {
		return err
	}
	kept := v.Tips[:0]
	for _, t := range v.Tips {
		if c, ok := peeled[t.Commit]; ok {
			t.Target = c
			kept = append(kept, t)
		}
	}
	v.Tips = kept
	return nil
}

// unresolved asks `git cat-file --batch-check` about each tip's object
// (with suffix appended, e.g. "^{commit}") and returns the object ids that
// did not resolve.
func unresolved(ctx context.Context, g *hostio.Git, repo hostio.Repo, tips []Tip, suffix string) (map[string]bool, error) {
	if len(tips) == 0 {
		return nil, nil
	}
	var in bytes.Buffer
	seen := map[string]bool{}
	for _, t := range tips {
		if !seen[t.Commit] {
			seen[t.Commit] = true
			in.WriteString(t.Commit + suffix + "\n")
		}
	}
	out, err := g.ObserveInput(ctx, repo.MainCheckout, in.Bytes(), "cat-file", "--batch-check")
	if err != nil {
		return nil, fmt.Errorf("check advertised objects: %w", err)
	}
	bad := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[1] == "missing" {
			bad[strings.TrimSuffix(f[0], suffix)] = true
		}
	}
	return bad, nil
}

// peel asks `git cat-file --batch-check` for the commit each tip's object
// names and returns it by object id; objects that are missing, or are not
// (tags of) commits, are absent.
func peel(ctx context.Context, g *hostio.Git, repo hostio.Repo, tips []Tip) (map[string]string, error) {
	if len(tips) == 0 {
		return nil, nil
	}
	var in bytes.Buffer
	var asked []string
	seen := map[string]bool{}
	for _, t := range tips {
		if !seen[t.Commit] {
			seen[t.Commit] = true
			asked = append(asked, t.Commit)
			in.WriteString(t.Commit + "^{commit}\n")
		}
	}
	out, err := g.ObserveInput(ctx, repo.MainCheckout, in.Bytes(), "cat-file", "--batch-check=%(objectname) %(objecttype)")
	if err != nil {
		return nil, fmt.Errorf("check advertised objects: %w", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(asked) {
		return nil, fmt.Errorf("check advertised objects: %d answers for %d objects", len(lines), len(asked))
	}
	peeled := map[string]string{}
	for i, l := range lines {
		if f := strings.Fields(l); len(f) == 2 && f[1] == "commit" && hostio.IsHexOID(f[0]) {
			peeled[asked[i]] = f[0]
		}
	}
	return peeled, nil
}

// Synthetic reports whether ref is one a forge makes up rather than one
// somebody pushed: GitHub's refs/pull/N/merge and GitLab's
// refs/merge-requests/N/merge are test merges the forge recomputes and
// drops at will (docs/decisions/0050-published-namespaces.md). Their
// commits are never fetched for a proof; one already present locally
// counts like any advertised ref while it is advertised.
func Synthetic(ref string) bool {
	for _, ns := range []string{"refs/pull/", "refs/merge-requests/"} {
		if rest, ok := strings.CutPrefix(ref, ns); ok {
			n, kind, ok := strings.Cut(rest, "/")
			return ok && n != "" && kind == "merge"
		}
	}
	return false
}

// tipRank orders tips for proofs: each remote's default branch first, then
// the usual default names, other branches, tags, everything else.
func tipRank(t Tip) int {
	if t.Default {
		return 0
	}
	switch t.Ref {
	case "refs/heads/main", "refs/heads/master", "refs/heads/trunk":
		return 1
	}
	switch {
	case strings.HasPrefix(t.Ref, "refs/heads/"):
		return 2
	case strings.HasPrefix(t.Ref, "refs/tags/"):
		return 3
	}
	return 4
}

// symrefHead reads "ref: <target>\tHEAD" from `git ls-remote --symref`.
func symrefHead(b []byte) string {
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "ref: "); ok {
			if target, name, ok := strings.Cut(rest, "\t"); ok && name == "HEAD" {
				return target
			}
		}
	}
	return ""
}

func IsAncestor(ctx context.Context, g *hostio.Git, repo hostio.Repo, a, b string) (bool, error) {
	_, err := g.Observe(ctx, repo.MainCheckout, "merge-base", "--is-ancestor", a, b)
	if err == nil {
		return true, nil
	}
	var ee *hostio.ExitError
	if errors.As(err, &ee) && ee.Code == 1 {
		return false, nil
	}
	return false, fmt.Errorf("ancestry of %s against %s: %w", a, b, err)
}
