package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/custody-sh/custody/fixtures"
	"github.com/custody-sh/custody/fixtures/unprivileged"
	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/store"
	"github.com/custody-sh/custody/store/storetest"
	"github.com/google/go-cmp/cmp"
	bolt "go.etcd.io/bbolt"
)

// schema1File is a real schema-1 state file written by the custody of that
// schema (see testdata/README.md). Its records, by the ids it holds:
const (
	schema1File = "testdata/schema1.db"
	// fxRemoving is a worktree left removing, with its removal intent.
	fxRemoving = "gamma-534f3f"
	// fxDestroying is a resource left removing, with its destroy intent.
	fxDestroying = "delta-bc9355/db"
	// fxLeased is an active worktree with a lease.
	fxLeased = "eps-fec887"
)

// kindBuckets are DefaultSchema's record buckets and their kinds.
var kindBuckets = map[string]machine.Kind{"records": machine.KindWorktree, "ledger": machine.KindResource}

// dump is every key and value of a state file, read with bbolt directly:
// bucket -> key -> value.
type dump map[string]map[string]string

// rawDump reads path with bbolt, read-only.
func rawDump(t testing.TB, path string) dump {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	d := dump{}
	err = db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			kv := map[string]string{}
			d[string(name)] = kv
			return b.ForEach(func(k, v []byte) error {
				kv[string(k)] = string(v)
				return nil
			})
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// copySchema1 copies the schema-1 testdata file to dir/state.db (dir made
// as needed) and returns its path and bytes.
func copySchema1(t testing.TB, dir string) (string, []byte) {
	t.Helper()
	b := readFile(t, schema1File)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, store.FileName)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, b
}

// backups lists the state.db.bak-* files beside path.
func backups(t testing.TB, path string) []string {
	t.Helper()
	m, err := filepath.Glob(path + ".bak-*")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(m)
	return m
}

// wantCopies checks that the copies beside path are exactly names, in
// order, each byte for byte orig.
func wantCopies(t testing.TB, path string, orig []byte, names ...string) {
	t.Helper()
	got := backups(t, path)
	if !slices.Equal(got, names) {
		t.Errorf("copies beside %s = %q, want %q", path, got, names)
	}
	for _, b := range got {
		if !bytes.Equal(readFile(t, b), orig) {
			t.Errorf("the copy %s is not the file as it was", b)
		}
	}
}

// wantIndex is the schema-2 intent index of d: "<kind>/<id>" for every
// record of every kind that carries an intent, valued with that intent as
// the record stores it.
func wantIndex(t testing.TB, d dump) map[string]string {
	t.Helper()
	idx := map[string]string{}
	for bucket, kind := range kindBuckets {
		for k, v := range d[bucket] {
			var rec struct {
				Intent json.RawMessage `json:"intent"`
			}
			if err := json.Unmarshal([]byte(v), &rec); err != nil {
				t.Fatalf("%s %s: %v", bucket, k, err)
			}
			if len(rec.Intent) > 0 && string(rec.Intent) != "null" {
				idx[string(kind)+"/"+k] = string(rec.Intent)
			}
		}
	}
	return idx
}

// wantLive is the live index d's records call for: "<kind>/<id>" of every
// record not tombstoned, with an empty value.
func wantLive(t testing.TB, d dump) map[string]string {
	t.Helper()
	live := map[string]string{}
	for bucket, kind := range kindBuckets {
		for k, v := range d[bucket] {
			var rec struct {
				State string `json:"state"`
			}
			if err := json.Unmarshal([]byte(v), &rec); err != nil {
				t.Fatalf("%s %s: %v", bucket, k, err)
			}
			if rec.State != "tombstoned" {
				live[string(kind)+"/"+k] = ""
			}
		}
	}
	return live
}

// wantJournalIndex is the journal index d's journal calls for: one key
// "<record>\x00<seq>" per entry.
func wantJournalIndex(t testing.TB, d dump) map[string]string {
	t.Helper()
	idx := map[string]string{}
	for k, v := range d["journal"] {
		var e struct {
			Record string `json:"record"`
		}
		if err := json.Unmarshal([]byte(v), &e); err != nil {
			t.Fatalf("journal %x: %v", k, err)
		}
		idx[e.Record+"\x00"+k] = ""
	}
	return idx
}

// unfinished is the problem Check reports for each record with an intent.
func unfinished(t testing.TB, d dump) []store.Problem {
	t.Helper()
	var ps []store.Problem
	for key, v := range wantIndex(t, d) {
		kind, id, _ := strings.Cut(key, "/")
		var in struct{ Kind string }
		if err := json.Unmarshal([]byte(v), &in); err != nil {
			t.Fatal(err)
		}
		where := kind + " " + id
		if kind == string(machine.KindWorktree) {
			where = "record " + id
		}
		ps = append(ps, store.Problem{Where: where, What: "carries an unfinished " + in.Kind + " intent", Fix: "custody resume",
			Intent: &store.ProblemIntent{Kind: machine.Kind(kind), Record: id, Intent: machine.IntentKind(in.Kind)}})
	}
	return ps
}

// sortProblems orders problems for comparison.
var sortProblems = cmp.Transformer("sort", func(ps []store.Problem) []store.Problem {
	out := slices.Clone(ps)
	slices.SortFunc(out, func(a, b store.Problem) int { return strings.Compare(a.Where+a.What, b.Where+b.What) })
	return out
})

// TestSchemaVersion: the exported constant is DefaultSchema's version.
func TestSchemaVersion(t *testing.T) {
	t.Parallel()
	if got := store.DefaultSchema().Version(); got != store.SchemaVersion {
		t.Errorf("DefaultSchema().Version() = %d, SchemaVersion = %d", got, store.SchemaVersion)
	}
	if fps := store.Failpoints(); !slices.Contains(fps, "store/migrate-midway") {
		t.Errorf("Failpoints() = %q lacks store/migrate-midway", fps)
	}
}

// TestUpgradeSchema1 opens a real schema-1 file: it is copied aside, then
// upgraded to the current schema (through every migration) with every record, ledger entry, lease,
// plan and journal entry byte for byte as it was, the intent index rebuilt as
// "<kind>/<id>" for every kind, and the live and journal indexes built from
// the records and the journal. Opening it again changes nothing.
func TestUpgradeSchema1(t *testing.T) {
	t.Parallel()
	path, orig := copySchema1(t, t.TempDir())
	before := rawDump(t, path)
	if before["meta"]["schema"] != "1" {
		t.Fatalf("the testdata file has schema %q, want 1", before["meta"]["schema"])
	}
	idx := wantIndex(t, before)
	if _, ok := idx["worktree/"+fxRemoving]; !ok {
		t.Fatalf("the testdata file lacks the worktree intent of %s: %v", fxRemoving, idx)
	}
	if _, ok := idx["resource/"+fxDestroying]; !ok {
		t.Fatalf("the testdata file lacks the resource intent of %s: %v", fxDestroying, idx)
	}

	s, err := store.Open(path, storetest.Timeout, false)
	if err != nil {
		t.Fatalf("Open of a schema-1 file: %v", err)
	}
	after := rawDump(t, path)
	if got := after["meta"]["schema"]; got != strconv.Itoa(store.SchemaVersion) {
		t.Errorf("schema after the upgrade = %q, want 3", got)
	}
	for _, b := range []string{"records", "ledger", "leases", "plans", "journal"} {
		if len(before[b]) == 0 {
			t.Errorf("the testdata file has no %s: the test would prove nothing about them", b)
		}
		if diff := cmp.Diff(before[b], after[b]); diff != "" {
			t.Errorf("bucket %s changed in the upgrade (-before +after):\n%s", b, diff)
		}
	}
	wantMeta := maps.Clone(before["meta"])
	wantMeta["schema"] = strconv.Itoa(store.SchemaVersion)
	// Schema 7: the entries written from now on are committed.
	wantMeta["content_authenticated_from"] = strconv.Itoa(len(before["journal"]) + 1)
	if diff := cmp.Diff(wantMeta, after["meta"]); diff != "" {
		t.Errorf("meta after the upgrade (-want +got):\n%s", diff)
	}
	if len(after["approvals"]) != 0 {
		t.Errorf("approvals after the upgrade = %v, want an empty bucket", after["approvals"])
	}
	if diff := cmp.Diff(idx, after["intents"]); diff != "" {
		t.Errorf("intent index after the upgrade (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantLive(t, before), after["live"]); diff != "" {
		t.Errorf("live index after the upgrade (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantJournalIndex(t, before), after["journal-by-record"]); diff != "" {
		t.Errorf("journal index after the upgrade (-want +got):\n%s", diff)
	}

	// Only the unfinished intents are problems; the journal verifies, by
	// Check and by an export verified offline against the head.
	if diff := cmp.Diff(unfinished(t, before), mustCheck(t, s), sortProblems); diff != "" {
		t.Errorf("Check after the upgrade (-want +got):\n%s", diff)
	}
	storetest.Strict(t, s)
	var exp bytes.Buffer
	if err := s.Export(&exp, store.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	seq, head := mustHead(t, s)
	rep, err := store.Verify(&exp, store.VerifyOptions{Head: head})
	if err != nil || rep.LastSeq != seq || rep.Entries != len(before["journal"]) {
		t.Errorf("Verify of the exported journal = %+v, %v; want %d entries up to seq %d", rep, err, len(before["journal"]), seq)
	}
	if recs, err := s.List(); err != nil || len(recs) != len(before["records"]) {
		t.Errorf("List after the upgrade = %d records, %v; want %d", len(recs), err, len(before["records"]))
	}

	up := s.Upgraded()
	wantBak := path + ".bak-1"
	if up == nil || up.From != 1 || up.To != store.SchemaVersion || up.Backup != wantBak {
		t.Fatalf("Upgraded() = %+v, want from 1 to the current schema with the copy at %s", up, wantBak)
	}
	wantCopies(t, path, orig, wantBak)

	again, err := store.Open(path, storetest.Timeout, false)
	if err != nil {
		t.Fatal(err)
	}
	if up := again.Upgraded(); up != nil {
		t.Errorf("a second Open upgraded again: %+v", up)
	}
	wantCopies(t, path, orig, wantBak)
	if diff := cmp.Diff(after, rawDump(t, path)); diff != "" {
		t.Errorf("a second Open changed the file (-before +after):\n%s", diff)
	}
}

// widgets is DefaultSchema with a third kind registered, as a later kind
// would be: its bucket and the migration that creates it. up, when set,
// runs after the bucket is made.
func widgets(up func(m *store.Migrator) error) store.Schema {
	return store.DefaultSchema().With(store.Bucket{Name: "widgets", Kind: "widget"}, store.Migration{
		To: store.SchemaVersion + 1, Name: "widgets", Up: func(m *store.Migrator) error {
			if err := m.CreateBucket("widgets"); err != nil {
				return err
			}
			if up != nil {
				return up(m)
			}
			return nil
		},
	})
}

func openWith(path string, sc store.Schema) (*store.Store, error) {
	return store.OpenWith(context.Background(), path, store.Options{Timeout: storetest.Timeout, Schema: &sc})
}

// TestUpgradeFailsMidway runs schema 1 to 4 where the last migration writes
// and then fails: the one transaction is rolled back, the file is byte for
// byte as it was, still schema 1, and the error says so and names the copy.
// A later Open without the failing migration upgrades it, keeping the first
// copy and making another.
func TestUpgradeFailsMidway(t *testing.T) {
	t.Parallel()
	path, orig := copySchema1(t, t.TempDir())
	boom := errors.New("the disk is on fire")
	sc := widgets(func(m *store.Migrator) error {
		if err := m.Put("widgets", []byte("w-000001"), []byte(`{"id":"w-000001"}`)); err != nil {
			return err
		}
		if err := m.Put("records", []byte("x-000001"), []byte(`{}`)); err != nil {
			return err
		}
		if err := m.Delete("journal", seqKey(1)); err != nil {
			return err
		}
		return boom
	})
	_, err := openWith(path, sc)
	if !errors.Is(err, store.ErrMigrationFailed) || !errors.Is(err, boom) {
		t.Fatalf("Open with a failing migration = %v, want ErrMigrationFailed wrapping the cause", err)
	}
	bak := path + ".bak-1"
	want := path + ": migration to schema " + strconv.Itoa(store.SchemaVersion+1) + " (widgets) failed: the disk is on fire; nothing was changed (the file is as it was; a copy is at " + bak + ")"
	if err.Error() != want {
		t.Errorf("error:\n%s\nwant:\n%s", err, want)
	}
	if got := readFile(t, path); !bytes.Equal(got, orig) {
		t.Errorf("the failed upgrade changed the file")
	}
	if got := rawDump(t, path)["meta"]["schema"]; got != "1" {
		t.Errorf("schema after the failed upgrade = %q, want 1", got)
	}
	wantCopies(t, path, orig, bak)

	s, err := store.Open(path, storetest.Timeout, false)
	if err != nil {
		t.Fatalf("Open after the failed upgrade: %v", err)
	}
	if up := s.Upgraded(); up == nil || up.Backup != bak+".1" {
		t.Errorf("Upgraded() = %+v, want the copy at %s.1 (never over %s)", up, bak, bak)
	}
	wantCopies(t, path, orig, bak, bak+".1")
}

// TestUpgradeRegistersKind registers a third kind: a file of the current
// schema reaches the next with the kind's bucket, Check covers its records
// and their intents, a fresh file of that schema is made with the bucket at
// once, and DefaultSchema refuses the newer file, leaving it as it was.
func TestUpgradeRegistersKind(t *testing.T) {
	t.Parallel()
	s := openUpgraded(t)
	two := readFile(t, s.Path())
	path := filepath.Join(t.TempDir(), store.FileName)
	if err := os.WriteFile(path, two, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := openWith(path, widgets(nil))
	if err != nil {
		t.Fatalf("Open with a third kind: %v", err)
	}
	cur := strconv.Itoa(store.SchemaVersion)
	if up := s.Upgraded(); up == nil || up.From != store.SchemaVersion || up.To != store.SchemaVersion+1 || up.Backup != path+".bak-"+cur {
		t.Errorf("Upgraded() = %+v, want the current schema to the next copied to %s.bak-%s", up, path, cur)
	}
	wantCopies(t, path, two, path+".bak-"+cur)
	d := rawDump(t, path)
	if _, ok := d["widgets"]; !ok || d["meta"]["schema"] != strconv.Itoa(store.SchemaVersion+1) {
		t.Fatalf("after the upgrade: schema %q, buckets %v", d["meta"]["schema"], slices.Sorted(maps.Keys(d)))
	}
	base := unfinished(t, d)
	if diff := cmp.Diff(base, mustCheck(t, s), sortProblems); diff != "" {
		t.Errorf("Check at the next schema (-want +got):\n%s", diff)
	}

	boltUpdate(t, path, func(tx *bolt.Tx) error {
		w, ints := tx.Bucket([]byte("widgets")), tx.Bucket(bIntents)
		for k, v := range map[string]string{
			"w-000001": `{"id":"w-000001","state":"active","rev":1}`,
			"w-000002": `{"id":"w-000002","state":"melted","rev":1}`,
			"w-000003": `{"id":"w-000003","state":"removing","rev":2,"intent":{"kind":"scrap"}}`,
			"w-000004": `{"id":"w-000004","state":"removing","rev":2,"intent":{"kind":"scrap"}}`,
			"w-000005": `{"id":"w-000005","state":"active"}`,
		} {
			if err := w.Put([]byte(k), []byte(v)); err != nil {
				return err
			}
			// As the commit path would index them: none is tombstoned.
			if err := tx.Bucket([]byte("live")).Put([]byte("widget/"+k), []byte{}); err != nil {
				return err
			}
		}
		return ints.Put([]byte("widget/w-000003"), []byte(`{"kind":"scrap"}`))
	})
	want := append(base,
		store.Problem{Where: "widget w-000002", What: `unknown state "melted"`},
		store.Problem{Where: "widget w-000003", What: "carries an unfinished scrap intent", Fix: "custody resume",
			Intent: &store.ProblemIntent{Kind: "widget", Record: "w-000003", Intent: "scrap"}},
		store.Problem{Where: "widget w-000004", What: "intent index disagrees with the record", Fix: "custody resume"},
		store.Problem{Where: "widget w-000004", What: "carries an unfinished scrap intent", Fix: "custody resume",
			Intent: &store.ProblemIntent{Kind: "widget", Record: "w-000004", Intent: "scrap"}},
		store.Problem{Where: "widget w-000005", What: "has no revision"},
	)
	if diff := cmp.Diff(want, mustCheck(t, s), sortProblems); diff != "" {
		t.Errorf("Check of the widgets (-want +got):\n%s", diff)
	}

	three := readFile(t, path)
	if _, err := store.Open(path, storetest.Timeout, false); !errors.Is(err, store.ErrSchemaNewer) ||
		!strings.Contains(err.Error(), "nothing was changed") {
		t.Errorf("DefaultSchema opening a schema-4 file: %v, want ErrSchemaNewer saying nothing was changed", err)
	}
	if !bytes.Equal(readFile(t, path), three) {
		t.Errorf("the refused Open changed the schema-4 file")
	}

	fresh := filepath.Join(t.TempDir(), store.FileName)
	sc := widgets(nil)
	f, err := store.OpenWith(context.Background(), fresh, store.Options{Timeout: storetest.Timeout, Create: true, Schema: &sc})
	if err != nil {
		t.Fatal(err)
	}
	if f.Upgraded() != nil {
		t.Errorf("a fresh file was upgraded: %+v", f.Upgraded())
	}
	if d := rawDump(t, fresh); d["meta"]["schema"] != strconv.Itoa(store.SchemaVersion+1) || d["widgets"] == nil {
		t.Errorf("fresh file: schema %q, buckets %v", d["meta"]["schema"], slices.Sorted(maps.Keys(d)))
	}
	wantCopies(t, fresh, nil)
}

// TestUpgradeConcurrent opens one schema-1 file from several goroutines at
// once (each its own bbolt handle, as separate custody processes would):
// exactly one upgrades it and makes one copy.
func TestUpgradeConcurrent(t *testing.T) {
	t.Parallel()
	path, orig := copySchema1(t, t.TempDir())
	const n = 6
	ups := make([]*store.Upgrade, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := store.Open(path, 10*time.Second, false)
			if errs[i] = err; err == nil {
				ups[i] = s.Upgraded()
			}
		}()
	}
	wg.Wait()
	var upgraded int
	for i := range n {
		if errs[i] != nil {
			t.Errorf("Open %d: %v", i, errs[i])
		}
		if ups[i] != nil {
			upgraded++
		}
	}
	if upgraded != 1 {
		t.Errorf("%d of %d concurrent Opens upgraded the file, want 1", upgraded, n)
	}
	wantCopies(t, path, orig, path+".bak-1")
}

// TestUpgradeReadOnly: a schema-1 file custody may not write is refused as
// unreadable, and nothing is changed or copied.
func TestUpgradeReadOnly(t *testing.T) {
	t.Parallel()
	if unprivileged.Run(t) {
		return // root is not refused by permission bits: run as nobody
	}
	path, orig := copySchema1(t, t.TempDir())
	if err := os.Chmod(path, 0o400); err != nil {
		t.Fatal(err)
	}
	_, err := store.Open(path, storetest.Timeout, false)
	t.Logf("Open: %v", err)
	if !errors.Is(err, store.ErrUnreadable) || !strings.Contains(err.Error(), "nothing was changed") {
		t.Errorf("Open of a read-only schema-1 file: %v, want ErrUnreadable saying nothing was changed", err)
	}
	if !bytes.Equal(readFile(t, path), orig) {
		t.Errorf("the refused upgrade changed the file")
	}
	wantCopies(t, path, orig)
}

// TestUpgradeKilledMidway kills a failpoint build of custody inside the
// upgrade's transaction (store/migrate-midway): the file is byte for byte
// as it was, and the next run upgrades it.
func TestUpgradeKilledMidway(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the custody binary")
	}
	bin := filepath.Join(t.TempDir(), "custody")
	build := exec.Command("go", "build", "-tags", "failpoint", "-o", bin, "github.com/custody-sh/custody/cmd/custody")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build custody with failpoints: %v\n%s", err, out)
	}
	r := fixtures.New(t, fixtures.Options{NoRemote: true})
	path, orig := copySchema1(t, filepath.Join(r.Dir, ".git", "custody"))
	run := func(env []string, args ...string) (string, int) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = r.Dir
		cmd.Env = append(r.Env(), env...)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL:
			return string(out), -9
		case errors.As(err, &ee):
			return string(out), ee.ExitCode()
		case err != nil:
			t.Fatalf("run custody %s: %v", args, err)
		}
		return string(out), 0
	}

	if out, code := run([]string{"CUSTODY_FAILPOINT=store/migrate-midway"}, "list", "--all"); code != -9 {
		t.Fatalf("custody list with the failpoint was not killed (exit %d):\n%s", code, out)
	}
	if !bytes.Equal(readFile(t, path), orig) {
		t.Fatalf("the killed upgrade changed the state file")
	}
	if got := rawDump(t, path)["meta"]["schema"]; got != "1" {
		t.Errorf("schema after the kill = %q, want 1", got)
	}

	// The next run upgrades; doctor says so, names the copy, and reports
	// the unfinished intents of both kinds.
	bak := path + ".bak-1"
	out, code := run(nil, "doctor")
	t.Logf("custody doctor after the kill:\n%s", out)
	for _, want := range []string{
		"upgraded " + path + " from schema 1 to " + strconv.Itoa(store.SchemaVersion) + "; the file as it was is kept at " + bak + ".1\n",
		"record " + fxRemoving + ": carries an unfinished removal intent\n\tto fix: custody resume\n",
		"resource " + fxDestroying + ": carries an unfinished resource-destroy intent\n\tto fix: custody resume\n",
	} {
		if code != 3 || !strings.Contains(out, want) {
			t.Errorf("custody doctor after the kill (exit %d) lacks %q", code, want)
		}
	}
	if out, code := run(nil, "list", "--all"); code != 0 || !strings.Contains(out, fxRemoving) || !strings.Contains(out, fxLeased) {
		t.Errorf("custody list after the upgrade (exit %d) does not list the records:\n%s", code, out)
	}
	d := rawDump(t, path)
	if d["meta"]["schema"] != strconv.Itoa(store.SchemaVersion) {
		t.Errorf("schema after the second run = %q, want 3", d["meta"]["schema"])
	}
	if diff := cmp.Diff(wantIndex(t, d), d["intents"]); diff != "" {
		t.Errorf("intent index after the second run (-want +got):\n%s", diff)
	}
	// The killed run had made its copy; the second made another.
	wantCopies(t, path, orig, bak, bak+".1")
}

// TestOpenWithInvalidSchema: a Schema whose migrations skip a version is
// refused before the file is touched.
func TestOpenWithInvalidSchema(t *testing.T) {
	t.Parallel()
	path, orig := copySchema1(t, t.TempDir())
	sc := store.DefaultSchema()
	sc.Migrations = append(sc.Migrations, store.Migration{To: store.SchemaVersion + 2, Name: "skips a version", Up: func(*store.Migrator) error { return nil }})
	if _, err := openWith(path, sc); err == nil || !strings.Contains(err.Error(), "invalid schema") {
		t.Errorf("Open with migrations 2, 3, 4 and 6: %v, want an invalid schema error", err)
	}
	if !bytes.Equal(readFile(t, path), orig) {
		t.Errorf("an invalid schema changed the file")
	}
	wantCopies(t, path, orig)
}
