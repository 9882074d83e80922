// TlsCerts: throwaway certificates for TLS tests (CAs, server and client certificates, and the
// broken ones a client must refuse), made with the openssl command line in a private temp dir.
#pragma once

#include <string>
#include <vector>

namespace expiry::test {

// A certificate and its private key, both PEM files.
struct CertFiles {
    std::string cert;
    std::string key;
};

// Contracts:
// - The constructor generates every file below with /usr/bin/openssl into a fresh temp dir
//   (mkdtemp under /tmp) and returns only when all exist; the destructor removes the dir.
// - Any openssl failure throws std::runtime_error naming the command, its exit status and its
//   whole output (the temp dir is removed first).
// - Keys are EC P-256. The valid certificates are valid from generation time for 30 days;
//   the CAs are self-signed with basicConstraints CA:TRUE.
// - Generation does not depend on the system's openssl.cnf (a config of our own is used).
// - Not thread-safe; the object is immutable once constructed.
class TlsCerts {
public:
    TlsCerts();
    ~TlsCerts();

    TlsCerts(const TlsCerts&) = delete;
    TlsCerts& operator=(const TlsCerts&) = delete;
    TlsCerts(TlsCerts&&) = delete;
    TlsCerts& operator=(TlsCerts&&) = delete;

    const std::string& dir() const { return dir_; }

    // The CA that signs server(), client(), expired_server() and other_name_server().
    const std::string& ca_file() const { return ca_file_; }
    // Signed by the CA; SAN IP:127.0.0.1 and DNS:localhost; extendedKeyUsage serverAuth.
    const CertFiles& server() const { return server_; }
    // Signed by the CA; CN expiry-test-client; extendedKeyUsage clientAuth.
    const CertFiles& client() const { return client_; }
    // A second CA, unrelated to ca_file() (verifying server() with it fails).
    const std::string& wrong_ca_file() const { return wrong_ca_file_; }
    // Like server(), but signed by the wrong CA (a client trusting ca_file() refuses it).
    const CertFiles& wrong_ca_server() const { return wrong_ca_server_; }
    // Like server() and signed by the CA, but valid only from 2020-01-01 to 2020-01-02.
    const CertFiles& expired_server() const { return expired_server_; }
    // Signed by the CA and otherwise valid, for SAN DNS:other.example only (no IP, no localhost).
    const CertFiles& other_name_server() const { return other_name_server_; }

private:
    void generate();
    // Runs openssl with `args` in dir_; throws std::runtime_error with its output unless it exits 0.
    void openssl(const std::vector<std::string>& args) const;
    // A new self-signed CA named `name` (files name.crt, name.key).
    std::string make_ca(const std::string& name, const std::string& subject);
    // A new key and a certificate for `subject` with extension section `extensions`, signed by
    // `ca` (files name.crt, name.key).
    CertFiles make_signed(const std::string& name, const std::string& subject, const std::string& ca,
                          const std::string& extensions, int serial);

    std::string dir_;
    std::string config_;  // our openssl.cnf (req, CA database and extension sections)
    std::string ca_file_;
    std::string wrong_ca_file_;
    CertFiles server_;
    CertFiles client_;
    CertFiles wrong_ca_server_;
    CertFiles expired_server_;
    CertFiles other_name_server_;
};

}  // namespace expiry::test
