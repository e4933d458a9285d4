# shellcheck shell=bash
# Certificates, keys and kubeconfigs of the local test cluster, made with openssl (sourced by
# scripts/ensure-k8s.sh after scripts/k8s/lib.sh). Each file is made once and kept: a second run
# changes nothing. One CA signs everything; client identities follow Kubernetes' conventions (CN is
# the user, O the group): system:masters for the admin and the apiserver's kubelet client,
# system:node:<node> in system:nodes for the kubelet (the Node authorizer and NodeRestriction).

# pki_key NAME: an RSA key $K8S_PKI/NAME.key, unless it exists.
pki_key() {
  [ -f "$K8S_PKI/$1.key" ] && return 0
  openssl genrsa -out "$K8S_PKI/$1.key" 2048 2>/dev/null
  chmod 600 "$K8S_PKI/$1.key"
}

# pki_cert NAME SUBJECT USAGE [SAN]: a certificate $K8S_PKI/NAME.crt signed by the CA, valid 10 years,
# for USAGE (serverAuth, clientAuth or both, comma-separated) and the subjectAltName SAN.
pki_cert() {
  local name="$1" subject="$2" usage="$3" san="${4:-}" ext
  [ -f "$K8S_PKI/$name.crt" ] && return 0
  pki_key "$name"
  ext="$(mktemp)"
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$usage"
    if [ -n "$san" ]; then echo "subjectAltName=$san"; fi
  } >"$ext"
  openssl req -new -key "$K8S_PKI/$name.key" -subj "$subject" -out "$K8S_PKI/$name.csr" 2>/dev/null
  openssl x509 -req -in "$K8S_PKI/$name.csr" -CA "$K8S_PKI/ca.crt" -CAkey "$K8S_PKI/ca.key" \
    -CAcreateserial -days 3650 -sha256 -extfile "$ext" -out "$K8S_PKI/$name.crt" 2>/dev/null
  rm -f "$ext" "$K8S_PKI/$name.csr"
}

# pki_kubeconfig FILE CERT_NAME: a kubeconfig for the apiserver at 127.0.0.1 with the client
# certificate CERT_NAME, credentials embedded.
pki_kubeconfig() {
  local file="$1" name="$2"
  [ -f "$file" ] && return 0
  cat >"$file" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: warden-local
  cluster:
    server: https://127.0.0.1:$K8S_APISERVER_PORT
    certificate-authority-data: $(base64 -w0 "$K8S_PKI/ca.crt")
users:
- name: $name
  user:
    client-certificate-data: $(base64 -w0 "$K8S_PKI/$name.crt")
    client-key-data: $(base64 -w0 "$K8S_PKI/$name.key")
contexts:
- name: warden-local
  context:
    cluster: warden-local
    user: $name
current-context: warden-local
EOF
  chmod 600 "$file"
}

# pki_ensure: every certificate, key and kubeconfig the cluster uses.
pki_ensure() {
  mkdir -p "$K8S_PKI" "$K8S_ETC"
  chmod 700 "$K8S_PKI"
  if [ ! -f "$K8S_PKI/ca.crt" ]; then
    pki_key ca
    openssl req -x509 -new -key "$K8S_PKI/ca.key" -subj "/CN=warden-local-ca" -days 3650 -sha256 \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
      -out "$K8S_PKI/ca.crt" 2>/dev/null
  fi
  local local_ips="IP:127.0.0.1,DNS:localhost"
  # etcd connects to itself with its serving certificate (its gRPC gateway): server and client.
  pki_cert etcd-server "/CN=warden-etcd" serverAuth,clientAuth "$local_ips"
  pki_cert apiserver-etcd-client "/CN=kube-apiserver-etcd-client" clientAuth
  pki_cert apiserver "/CN=kube-apiserver" serverAuth \
    "$local_ips,IP:$K8S_NODE_IP,IP:$K8S_SERVICE_IP,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  pki_cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" clientAuth
  pki_cert kubelet-server "/CN=$K8S_NODE" serverAuth "IP:$K8S_NODE_IP,DNS:$K8S_NODE"
  pki_cert kubelet "/O=system:nodes/CN=system:node:$K8S_NODE" clientAuth
  pki_cert admin "/O=system:masters/CN=warden-admin" clientAuth
  pki_cert controller-manager "/CN=system:kube-controller-manager" clientAuth
  pki_cert scheduler "/CN=system:kube-scheduler" clientAuth
  # The service-account token signing key pair.
  pki_key service-account
  [ -f "$K8S_PKI/service-account.pub" ] ||
    openssl rsa -in "$K8S_PKI/service-account.key" -pubout -out "$K8S_PKI/service-account.pub" 2>/dev/null
  pki_kubeconfig "$K8S_ADMIN_KUBECONFIG" admin
  pki_kubeconfig "$K8S_ETC/kubelet.kubeconfig" kubelet
  pki_kubeconfig "$K8S_ETC/controller-manager.kubeconfig" controller-manager
  pki_kubeconfig "$K8S_ETC/scheduler.kubeconfig" scheduler
}
