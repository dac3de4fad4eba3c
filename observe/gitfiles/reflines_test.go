package gitfiles

import (
	"errors"
	"strings"
	"testing"

	"github.com/custody-sh/custody/observe/hostio"
	"github.com/google/go-cmp/cmp"
)

const (
	oidA = "1111111111111111111111111111111111111111"
	oidB = "2222222222222222222222222222222222222222222222222222222222222222"
)

// TestParseRefLines: what for-each-ref prints is parsed exactly; anything
// Git never prints is ErrMalformed naming the line.
func TestParseRefLines(t *testing.T) {
	t.Parallel()
	got, err := ParseRefLines([]byte(oidA + " refs/heads/main\n" + oidB + " refs/custody/recovered/x-1/" + oidA))
	want := []LocalRef{{oidA, "refs/heads/main"}, {oidB, "refs/custody/recovered/x-1/" + oidA}}
	if err != nil || !cmp.Equal(got, want) {
		t.Errorf("ParseRefLines = %+v, %v; want %+v", got, err, want)
	}
	for _, bad := range []string{"\n", oidA + "\n", oidA + " main\n", oidA + " refs/heads/a b\n", "XYZ refs/heads/x\n", oidA + " refs/\n", oidA + "  refs/heads/x\n"} {
		if got, err := ParseRefLines([]byte(bad)); !errors.Is(err, hostio.ErrMalformed) || got != nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("ParseRefLines(%q) = %+v, %v; want ErrMalformed at line 1", bad, got, err)
		}
	}
}

// TestParseBatchCheck: found objects by type, missing names skipped, any
// other line ErrMalformed.
func TestParseBatchCheck(t *testing.T) {
	t.Parallel()
	got, err := ParseBatchCheck([]byte(oidA + " commit\ndeadbeef missing\n" + oidB + " blob\n"))
	if want := map[string]string{oidA: "commit", oidB: "blob"}; err != nil || !cmp.Equal(got, want) {
		t.Errorf("ParseBatchCheck = %+v, %v; want %+v", got, err, want)
	}
	for _, bad := range []string{oidA + "\n", oidA + " widget\n", "nothex commit\n", "\n"} {
		if _, err := ParseBatchCheck([]byte(bad)); !errors.Is(err, hostio.ErrMalformed) {
			t.Errorf("ParseBatchCheck(%q) = %v; want ErrMalformed", bad, err)
		}
	}
}

// TestParseOIDList: one id per line, nothing else.
func TestParseOIDList(t *testing.T) {
	t.Parallel()
	if got, err := ParseOIDList([]byte(oidA + "\n" + oidB)); err != nil || !cmp.Equal(got, []string{oidA, oidB}) {
		t.Errorf("ParseOIDList = %v, %v", got, err)
	}
	for _, bad := range []string{"\n", oidA + " x\n", "^" + oidA + "\n"} {
		if _, err := ParseOIDList([]byte(bad)); !errors.Is(err, hostio.ErrMalformed) {
			t.Errorf("ParseOIDList(%q) = %v; want ErrMalformed", bad, err)
		}
	}
}

// FuzzParseRefLines: never panics; what it accepts re-serialises to the
// same input (one line per ref), so nothing is dropped or invented.
func FuzzParseRefLines(f *testing.F) {
	f.Add([]byte(oidA + " refs/heads/main\n"))
	f.Add([]byte(oidB + " refs/tags/v1\n" + oidA + " refs/heads/x"))
	f.Add([]byte(oidA + " refs/heads/a b\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		refs, err := ParseRefLines(b)
		if err != nil {
			return
		}
		var sb strings.Builder
		for _, r := range refs {
			sb.WriteString(r.Object + " " + r.Name + "\n")
		}
		if in := strings.TrimSuffix(string(b), "\n"); len(refs) == 0 && in != "" || len(refs) > 0 && sb.String() != in+"\n" {
			t.Fatalf("ParseRefLines(%q) = %+v, which does not give back the input", b, refs)
		}
	})
}

// FuzzParseBatchCheck: never panics; every accepted object is a full id
// with one of git's four object types.
func FuzzParseBatchCheck(f *testing.F) {
	f.Add([]byte(oidA + " commit\nx missing\n"))
	f.Add([]byte(oidB + " tag\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseBatchCheck(b)
		if err != nil {
			return
		}
		for id, typ := range m {
			if !hostio.IsHexOID(id) || !strings.Contains(" commit tree blob tag ", " "+typ+" ") {
				t.Fatalf("ParseBatchCheck(%q) accepted %q %q", b, id, typ)
			}
		}
	})
}

// FuzzParseOIDList: never panics; every accepted line is a full id.
func FuzzParseOIDList(f *testing.F) {
	f.Add([]byte(oidA + "\n"))
	f.Add([]byte(oidA + "\n" + oidB))
	f.Fuzz(func(t *testing.T, b []byte) {
		ids, err := ParseOIDList(b)
		if err != nil {
			return
		}
		for _, id := range ids {
			if !hostio.IsHexOID(id) {
				t.Fatalf("ParseOIDList(%q) accepted %q", b, id)
			}
		}
	})
}
