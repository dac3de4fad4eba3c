package proof_test

import (
	"github.com/custody-sh/custody/observe/internal/gitsandbox"
	"os"
	"path/filepath"
	"testing"
)

// zooTemplate is the proof zoo TestMain builds once for the run, before any
// test starts; each test that needs a zoo copies it (newProofZoo). It is set
// before the tests run and only read by them. Nil when no selected test uses
// a zoo.
var zooTemplate *proofZoo

// zooTests are the tests that use a proof zoo.
var zooTests = []string{"TestProveAllAgreesWithProve", "TestProveAllOneHeadsTroubleIsItsOwn",
	"TestProveBrokenObjectIsItsHeadsOwn", "TestProveCancelledBatch"}

// TestMain runs the tests with git pinned and the templates built
// (runMain), the proof zoo among them when a selected test uses one.
func TestMain(m *testing.M) {
	os.Exit(gitsandbox.RunMain(m, func(tmp string) error {
		if !gitsandbox.Selected(zooTests) {
			return nil
		}
		z, err := gitsandbox.BuildTemplate(filepath.Join(tmp, "zoo"), buildProofZoo)
		if err != nil {
			return err
		}
		zooTemplate = z
		return nil
	}))
}
