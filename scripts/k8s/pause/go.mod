module warden.local/k8s-pause

go 1.24.0
