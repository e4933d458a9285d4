module warden.dev/gateway

go 1.23
