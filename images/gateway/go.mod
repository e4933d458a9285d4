module warden.dev/gateway

go 1.23

require golang.org/x/net v0.33.0
