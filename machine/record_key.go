package machine

// AdminKeyOrID is the name of the git admin entry of the record's tree
// (<common>/worktrees/<key>): the AdminKey the record stores, or, when it
// stores none, its ID, which is the key custody new gives the tree it
// makes. Every reader of a record's admin entry goes through it.
func (r Record) AdminKeyOrID() string {
	if r.AdminKey != "" {
		return r.AdminKey
	}
	return r.ID
}
