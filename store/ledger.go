package store

import "github.com/custody-sh/custody/machine"

// GetResource returns the ledger entry with id.
func (s *Store) GetResource(id string) (machine.Resource, error) {
	return Load[machine.Resource](s, machine.KindResource, id)
}

// Resources returns every ledger entry, sorted by id.
func (s *Store) Resources() ([]machine.Resource, error) {
	return ListKind[machine.Resource](s, machine.KindResource)
}

// ResourceTransition is one ledger entry's state change.
type ResourceTransition = Change[machine.Resource]
