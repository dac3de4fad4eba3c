package observe_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/custody-sh/custody/observe"
)

// TestConfigLandCheck: [land] check is read as written; a blank one, or
// one that is not a string, is refused naming the key.
func TestConfigLandCheck(t *testing.T) {
	c, err := observe.ParseConfig("custody.toml", []byte("[land]\ncheck = \"make test\"\n"), "shop")
	if err != nil || c.LandCheck != "make test" {
		t.Fatalf("got %q, %v; want the command as written", c.LandCheck, err)
	}
	for _, doc := range []string{"[land]\ncheck = \"  \"\n", "[land]\ncheck = 3\n", "[land]\nchecks = \"x\"\n"} {
		_, err := observe.ParseConfig("custody.toml", []byte(doc), "shop")
		if !errors.Is(err, observe.ErrConfig) || !strings.Contains(err.Error(), "land.check") && !strings.Contains(err.Error(), "checks") {
			t.Errorf("%q: %v; want a config error naming the key", doc, err)
		}
	}
}
