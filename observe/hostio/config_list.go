package hostio

import "context"

// ConfigList is git's whole configuration as git reads it from the main
// checkout: `git config -z --list`, every scope, includes followed (the
// default when no file is named). What several readings of one command need
// of the configuration (the remotes, attributes from outside the
// repository) is parsed from this one listing, one git process.
func (g *Git) ConfigList(ctx context.Context, repo Repo) ([]byte, error) {
	return g.Observe(ctx, repo.MainCheckout, "config", "-z", "--list")
}
