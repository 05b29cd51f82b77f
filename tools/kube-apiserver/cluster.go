package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// portSet holds the loopback ports; kept in the state folder so that a restart serves
// the same address and an earlier kubeconfig stays valid.
type portSet struct {
	APIServer  int `json:"apiserver"`
	EtcdClient int `json:"etcdClient"`
	EtcdPeer   int `json:"etcdPeer"`
}

func ensurePorts(path string) (portSet, error) {
	var ports portSet
	data, err := os.ReadFile(path)
	if err == nil {
		return ports, json.Unmarshal(data, &ports)
	}
	if !errors.Is(err, os.ErrNotExist) {
		return ports, err
	}
	free, err := freePorts(3)
	if err != nil {
		return ports, err
	}
	ports = portSet{APIServer: free[0], EtcdClient: free[1], EtcdPeer: free[2]}
	data, err = json.Marshal(ports)
	if err != nil {
		return ports, err
	}
	return ports, os.WriteFile(path, data, 0o600)
}

// freePorts asks the kernel for n distinct free loopback ports (held open together so
// they differ; another process could still take one before the servers bind it).
func freePorts(n int) ([]int, error) {
	var ports []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func writeKubeconfig(path string, port int, pki pkiFiles) error {
	read := func(p string) ([]byte, error) { return os.ReadFile(p) }
	ca, err := read(pki.CACert)
	if err != nil {
		return err
	}
	cert, err := read(pki.AdminCert)
	if err != nil {
		return err
	}
	key, err := read(pki.AdminKey)
	if err != nil {
		return err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["pxfa-test"] = &clientcmdapi.Cluster{
		Server:                   fmt.Sprintf("https://127.0.0.1:%d", port),
		CertificateAuthorityData: ca,
	}
	cfg.AuthInfos[adminUser] = &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key}
	cfg.Contexts["pxfa-test"] = &clientcmdapi.Context{Cluster: "pxfa-test", AuthInfo: adminUser}
	cfg.CurrentContext = "pxfa-test"
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return err
	}
	return writeSecretFile(path, data)
}

// startEtcd runs a one-member etcd on loopback over plain HTTP (nothing but this process
// and loopback clients reach it). fsync is off: a test cluster's data need not survive
// a power loss, and fsync on a shared disk slows every write.
func startEtcd(dir string, ports portSet) (*embed.Etcd, error) {
	cfg := embed.NewConfig()
	cfg.Dir = dir
	cfg.Name = "pxfa-test"
	client := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", ports.EtcdClient)}
	peer := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", ports.EtcdPeer)}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = fmt.Sprintf("%s=%s", cfg.Name, peer.String())
	cfg.LogLevel = "error"
	cfg.UnsafeNoFsync = true
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, err
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, nil
	case <-time.After(60 * time.Second):
		e.Close()
		return nil, errors.New("not ready after 60s")
	}
}

func exitOnEtcdError(e *embed.Etcd) {
	if err, ok := <-e.Err(); ok && err != nil {
		fmt.Fprintf(os.Stderr, "pxfa-kube-apiserver: etcd: %v\n", err)
		os.Exit(1)
	}
}
