package machine_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/custody-sh/custody/machine"
)

// TestUnexpandedDoubleQuotes: sh starts no single-quoted string inside
// double quotes, so an apostrophe there does not hide a later @token@:
// Unexpanded still names it, and the command is refused before it runs.
func TestUnexpandedDoubleQuotes(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{
		`echo "it's" >/dev/null; rm -rf /srv/@nosuch@`,
		`psql -c "select 'x'" && dropdb "don't-@nosuch@"`,
	} {
		if got := machine.Unexpanded(cmd); got != "@nosuch@" {
			t.Errorf("Unexpanded(%q) = %q, want @nosuch@", cmd, got)
		}
	}
}

// FuzzFreeze: Freeze never panics, and whatever the template, no value
// enters the frozen text: a value is reached only through its variable.
func FuzzFreeze(f *testing.F) {
	for _, s := range []string{
		`mkdir @dir@`, `echo "@dir@" '@dir@' $((@port@+1))`, "cat <<EOF\n@dir@\nEOF\n", "cat <<'EOF'\n@dir@\nEOF",
		"x=`echo @dir@`; y=$(echo \"@dir@\"); z=${A:-@dir@}", `\@dir@ "\@dir@" # @dir@`, "<<-\"E\"\n\t@dir@\n\tE\n@dir@", `$(( ( @port@ ) ))`,
	} {
		f.Add(s)
	}
	const sentinel = "VALUE-SENTINEL"
	f.Fuzz(func(t *testing.T, tmpl string) {
		vals := map[string]string{"dir": sentinel, "port": "1"}
		out, err := machine.Freeze(tmpl, vals)
		if err != nil {
			var ute *machine.UnsafeTokenError
			if !errors.As(err, &ute) {
				t.Fatalf("Freeze(%q) = %v, not an UnsafeTokenError", tmpl, err)
			}
			return
		}
		if strings.Count(out, sentinel) > strings.Count(tmpl, sentinel) {
			t.Fatalf("Freeze(%q) = %q spliced a value into the text", tmpl, out)
		}
		if !strings.Contains(tmpl, "@dir@") && !strings.Contains(tmpl, "@port@") && out != tmpl {
			t.Fatalf("Freeze(%q) changed a template with no token: %q", tmpl, out)
		}
	})
}

// FuzzRedactCredentials: redaction is idempotent, and the user
// information of a URL never survives it.
func FuzzRedactCredentials(f *testing.F) {
	f.Add("fatal: https://user:secret@example.com/r.git", "user", "secret")
	f.Add("ssh://git@host/x and http://a:b@c/d", "a", "b")
	f.Add("PGPASSWORD=hunter2 psql; api_key = \"x y\"", "u", "hunter2")
	f.Add("Authorization: Bearer abcdef123456 token: x", "u", "p")
	f.Fuzz(func(t *testing.T, s, user, pass string) {
		once := machine.RedactCredentials(s)
		if machine.RedactCredentials(once) != once {
			t.Fatalf("RedactCredentials is not idempotent on %q: %q", s, once)
		}
		if user == "" || strings.ContainsAny(user+pass, "/@ \t\n\r\v\f\"") {
			return
		}
		if isWord(pass) {
			if got := machine.RedactCredentials("run PGPASSWORD=" + pass + " psql"); strings.Contains(got, pass) {
				t.Fatalf("a password's value survives redaction: %q", got)
			}
		}
		u := "https://" + user + ":" + pass + "@host.example/repo.git"
		if got := machine.RedactCredentials("remote " + u + " failed"); got != "remote https://host.example/repo.git failed" {
			t.Fatalf("RedactCredentials(%q) = %q", u, got)
		}
	})
}

// isWord reports whether s is a non-empty run of letters, digits and
// underscores that is not itself the redaction mark.
func isWord(s string) bool {
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return s != "" && !strings.Contains("psql PGPASSWORD run redacted", s)
}
