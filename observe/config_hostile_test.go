//go:build unix

package observe

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/custody-sh/custody/machine"
	"github.com/custody-sh/custody/observe/hostio"
	"github.com/custody-sh/custody/observe/safefile"
)

// TestReadConfigHostile: custody.toml as a symlink (to /dev/zero, to a
// secret, even to a valid configuration), a FIFO or an oversized file is
// refused at once as ErrConfig naming the path, and no error carries the
// secret. A regular file's digest is the sha256 of its bytes.
func TestReadConfigHostile(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	secret := filepath.Join(outside, "id_ed25519")
	if err := os.WriteFile(secret, []byte("[project]\nslug = \"TOPSECRET-KEY-MATERIAL\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	valid := filepath.Join(outside, "valid.toml")
	if err := os.WriteFile(valid, []byte("[resources.db]\ncreate = 'true'\ndestroy = 'true'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, plant := range map[string]func(p string) error{
		"symlink to /dev/zero":  func(p string) error { return os.Symlink("/dev/zero", p) },
		"symlink to a secret":   func(p string) error { return os.Symlink(secret, p) },
		"symlink to valid toml": func(p string) error { return os.Symlink(valid, p) },
		"FIFO":                  func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"oversized": func(p string) error {
			return os.WriteFile(p, []byte("# "+strings.Repeat("x", MaxConfigSize)+"\n"), 0o600)
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			repo := hostio.Repo{MainCheckout: dir, CommonDir: filepath.Join(dir, ".git"), Toplevel: dir}
			path := filepath.Join(dir, machine.ConfigFile)
			if err := plant(path); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { _, _, err := ReadConfig(repo); done <- err }()
			select {
			case err := <-done:
				if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), path) {
					t.Errorf("ReadConfig = %v, want ErrConfig naming %s", err, path)
				}
				if !errors.Is(err, safefile.ErrNotRegular) && !errors.Is(err, safefile.ErrTooLarge) {
					t.Errorf("ReadConfig = %v, want it to say the file is not a regular file or too large", err)
				}
				if err != nil && strings.Contains(err.Error(), "TOPSECRET") {
					t.Errorf("the error echoes the secret: %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("ReadConfig hangs")
			}
		})
	}

	dir := t.TempDir()
	repo := hostio.Repo{MainCheckout: dir, CommonDir: filepath.Join(dir, ".git"), Toplevel: dir}
	if _, src, err := ReadConfig(repo); err != nil || src.Present || src.Digest != "" {
		t.Errorf("ReadConfig without a file = %+v, %v; want absent, no digest", src, err)
	}
	body := []byte("[resources.db]\ncreate = 'true'\ndestroy = 'true'\n")
	if err := os.WriteFile(filepath.Join(dir, machine.ConfigFile), body, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	if _, src, err := ReadConfig(repo); err != nil || !src.Present || src.Digest != hex.EncodeToString(sum[:]) {
		t.Errorf("ReadConfig = %+v, %v; want present with digest %x", src, err, sum)
	}
}
