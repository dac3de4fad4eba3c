package machine_test

import (
	"testing"

	"github.com/custody-sh/custody/machine"
)

// TestRedactCredentials: every class of credential is stripped, and
// ordinary words (refusal codes, prose) are left alone.
func TestRedactCredentials(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"fatal: https://user:secret@example.com/r.git", "fatal: https://example.com/r.git"},
		{"PGPASSWORD=hunter2 psql -h db", "PGPASSWORD=[redacted] psql -h db"},
		{`create = "DB_TOKEN='s3cr3t value' ./up"`, `create = "DB_TOKEN=[redacted] ./up"`},
		{`password = "abc def"`, `password = [redacted]`},
		{`{"detail":"api_key = \"xyz\" run"}`, `{"detail":"api_key = [redacted] run"}`},
		{"mysql --password=hunter2 -u root", "mysql --password=[redacted] -u root"},
		{"secret: hunter2", "secret: [redacted]"},
		{"curl -H 'Authorization: Bearer abcdef123456'", "curl -H 'Authorization: Bearer [redacted]'"},
		{"token ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789 used", "token [redacted] used"},
		{"key AKIA" + "ABCDEFGHIJKLMNOP here", "key [redacted] here"},
		{"export AWS_SECRET_ACCESS_KEY=abc/def+ghi", "export AWS_SECRET_ACCESS_KEY=[redacted]"},
		// Not credentials.
		{"unsafe-token: @id@ stands where code is read", "unsafe-token: @id@ stands where code is read"},
		{`{"code":"unsafe-token","message":"a token custody knows"}`, `{"code":"unsafe-token","message":"a token custody knows"}`},
		{"ssh://git@host/x", "ssh://host/x"},
		{"the tree holds secret-bearing work", "the tree holds secret-bearing work"},
	} {
		got := machine.RedactCredentials(c.in)
		if got != c.want {
			t.Errorf("RedactCredentials(%q)\n  = %q\nwant %q", c.in, got, c.want)
		}
		if again := machine.RedactCredentials(got); again != got {
			t.Errorf("not idempotent on %q: %q then %q", c.in, got, again)
		}
	}
}
