module github.com/custody-sh/custody

go 1.26.0

require (
	github.com/alecthomas/kong v1.17.0
	github.com/go-json-experiment/json v1.27.2
	github.com/google/go-cmp v0.7.0
	github.com/pelletier/go-toml/v2 v2.4.3
	github.com/qmuntal/stateless v1.7.2
	github.com/rogpeppe/go-internal v1.16.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	go.etcd.io/bbolt v1.5.0
	golang.org/x/sys v0.50.0
)

require (
	golang.org/x/text v0.14.0 // indirect
	golang.org/x/tools v0.36.0 // indirect
)
