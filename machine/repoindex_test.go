package machine_test

import (
	"errors"
	"testing"
	"time"

	"github.com/custody-sh/custody/machine"
	json "github.com/custody-sh/custody/machine/bytejson"
	"github.com/google/go-cmp/cmp"
)

// TestRepositoryIndexWith: recording adds a new repository in common-dir
// order, updates a moved main checkout keeping when it was added, and
// changes nothing for one recorded already; paths of any bytes come back
// exactly.
func TestRepositoryIndexWith(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	later := at.Add(time.Hour)
	odd := machine.IndexedRepository{CommonDir: "/src/caf\xe9 repo/.git", MainCheckout: "/src/caf\xe9 repo", AddedAt: at}
	b := machine.IndexedRepository{CommonDir: "/src/b/.git", MainCheckout: "/src/b", AddedAt: at}
	var x machine.RepositoryIndex
	x, changed := x.With(odd)
	if !changed {
		t.Fatal("a first repository changed nothing")
	}
	x, changed = x.With(b)
	if !changed {
		t.Fatal("a second repository changed nothing")
	}
	want := machine.RepositoryIndex{Format: machine.RepositoryIndexFormat, Repositories: []machine.IndexedRepository{b, odd}}
	if diff := cmp.Diff(want, x); diff != "" {
		t.Fatalf("index (-want +got):\n%s", diff)
	}
	if _, changed := x.With(machine.IndexedRepository{CommonDir: b.CommonDir, MainCheckout: b.MainCheckout, AddedAt: later}); changed {
		t.Error("recording a repository again changed the index")
	}
	moved, changed := x.With(machine.IndexedRepository{CommonDir: b.CommonDir, MainCheckout: "/elsewhere/b", AddedAt: later})
	if !changed || moved.Repositories[0].MainCheckout != "/elsewhere/b" || !moved.Repositories[0].AddedAt.Equal(at) {
		t.Errorf("a moved checkout: %+v, changed %v", moved.Repositories[0], changed)
	}
	if x.Repositories[0].MainCheckout != "/src/b" {
		t.Error("With changed the index it was called on")
	}
	text, err := json.Marshal(x)
	if err != nil {
		t.Fatal(err)
	}
	back, err := machine.ParseRepositoryIndex(text)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(x, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if !back.Holds(odd.CommonDir) || back.Holds("/src/c/.git") {
		t.Error("Holds does not say what the index holds")
	}
}

// TestParseRepositoryIndexRefuses: another format, unknown members,
// relative paths and text that is not JSON are ErrRepositoryIndex; an
// empty file is an empty index.
func TestParseRepositoryIndexRefuses(t *testing.T) {
	t.Parallel()
	if x, err := machine.ParseRepositoryIndex([]byte("\n")); err != nil || len(x.Repositories) != 0 {
		t.Errorf("empty file: %+v, %v", x, err)
	}
	for name, text := range map[string]string{
		"another format":   `{"format":"custody.repositories/2","repositories":[]}`,
		"no format":        `{"repositories":[]}`,
		"unknown member":   `{"format":"custody.repositories/1","repositories":[],"extra":1}`,
		"relative path":    `{"format":"custody.repositories/1","repositories":[{"common_dir":"src/.git","main_checkout":"src","added_at":"2026-01-01T00:00:00Z"}]}`,
		"no checkout":      `{"format":"custody.repositories/1","repositories":[{"common_dir":"/src/.git","main_checkout":"","added_at":"2026-01-01T00:00:00Z"}]}`,
		"not JSON":         `format = 1`,
		"a lone surrogate": `{"format":"custody.repositories/1","repositories":[{"common_dir":"/\ud800/.git","main_checkout":"/x","added_at":"2026-01-01T00:00:00Z"}]}`,
	} {
		if _, err := machine.ParseRepositoryIndex([]byte(text)); !errors.Is(err, machine.ErrRepositoryIndex) {
			t.Errorf("%s: error %v, want ErrRepositoryIndex", name, err)
		}
	}
}

// FuzzParseRepositoryIndex: whatever the file holds, parsing never
// panics, and an index it accepts is written back to one that parses to
// the same index.
func FuzzParseRepositoryIndex(f *testing.F) {
	f.Add([]byte(`{"format":"custody.repositories/1","repositories":[{"common_dir":"/a/.git","main_checkout":"/a","added_at":"2026-01-01T00:00:00Z"}]}`))
	f.Add([]byte(`{"format":"custody.repositories/1","repositories":[{"common_dir":"/caf\udce9/.git","main_checkout":"/caf\udce9","added_at":"2026-01-01T00:00:00Z"}]}`))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := machine.ParseRepositoryIndex(b)
		if err != nil {
			return
		}
		text, err := json.Marshal(x)
		if err != nil {
			t.Fatalf("marshal %+v: %v", x, err)
		}
		back, err := machine.ParseRepositoryIndex(text)
		if err != nil {
			t.Fatalf("written back, it does not parse: %v\n%s", err, text)
		}
		if diff := cmp.Diff(x, back); diff != "" {
			t.Fatalf("round trip (-want +got):\n%s", diff)
		}
	})
}
