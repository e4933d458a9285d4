module warden.local/helper

go 1.19
