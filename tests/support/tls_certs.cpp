// TlsCerts implementation: one openssl.cnf of our own, then openssl req / x509 / ca runs.
#include "support/tls_certs.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "harness/child_process.h"

namespace expiry::test {
namespace {

constexpr const char* kOpenssl = "/usr/bin/openssl";
constexpr auto kOpensslDeadline = std::chrono::seconds(30);
constexpr const char* kValidDays = "30";

// Sections used with -extensions / -extfile. The CA database section serves `openssl ca`, the
// only way openssl 3.0 signs with explicit (past) start and end dates.
std::string config_text(const std::string& dir) {
    return "[ req ]\n"
           "distinguished_name = req_dn\n"
           "prompt = no\n"
           "[ req_dn ]\n"
           "CN = unused\n"
           "[ ca ]\n"
           "default_ca = test_ca\n"
           "[ test_ca ]\n"
           "database = " + dir + "/cadb/index.txt\n"
           "new_certs_dir = " + dir + "/cadb\n"
           "serial = " + dir + "/cadb/serial\n"
           "default_md = sha256\n"
           "policy = policy_any\n"
           "unique_subject = no\n"
           "copy_extensions = none\n"
           "[ policy_any ]\n"
           "commonName = supplied\n"
           "[ ca_ext ]\n"
           "basicConstraints = critical, CA:TRUE\n"
           "keyUsage = critical, keyCertSign, cRLSign\n"
           "subjectKeyIdentifier = hash\n"
           "[ server_ext ]\n"
           "basicConstraints = CA:FALSE\n"
           "keyUsage = critical, digitalSignature\n"
           "extendedKeyUsage = serverAuth\n"
           "subjectAltName = IP:127.0.0.1, DNS:localhost\n"
           "[ other_name_ext ]\n"
           "basicConstraints = CA:FALSE\n"
           "keyUsage = critical, digitalSignature\n"
           "extendedKeyUsage = serverAuth\n"
           "subjectAltName = DNS:other.example\n"
           "[ client_ext ]\n"
           "basicConstraints = CA:FALSE\n"
           "keyUsage = critical, digitalSignature\n"
           "extendedKeyUsage = clientAuth\n";
}

void write_file(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::trunc);
    out << text;
    out.close();
    if (!out) throw std::runtime_error("TlsCerts: cannot write " + path);
}

std::string join(const std::vector<std::string>& args) {
    std::string s = kOpenssl;
    for (const auto& a : args) s += " " + a;
    return s;
}

}  // namespace

TlsCerts::TlsCerts() {
    std::string tmpl = "/tmp/expiry-tls-XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr)
        throw std::runtime_error(std::string("TlsCerts: mkdtemp failed: ") + std::strerror(errno));
    dir_ = tmpl;
    try {
        generate();
    } catch (...) {
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
        throw;
    }
}

TlsCerts::~TlsCerts() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
}

void TlsCerts::generate() {
    config_ = dir_ + "/openssl.cnf";
    write_file(config_, config_text(dir_));
    std::filesystem::create_directory(dir_ + "/cadb");
    write_file(dir_ + "/cadb/index.txt", "");
    write_file(dir_ + "/cadb/serial", "1000\n");

    ca_file_ = make_ca("ca", "/CN=expiry-relay test CA");
    wrong_ca_file_ = make_ca("wrong-ca", "/CN=unrelated test CA");
    server_ = make_signed("server", "/CN=127.0.0.1", "ca", "server_ext", 1);
    client_ = make_signed("client", "/CN=expiry-test-client", "ca", "client_ext", 2);
    wrong_ca_server_ = make_signed("wrong-ca-server", "/CN=127.0.0.1", "wrong-ca", "server_ext", 3);
    other_name_server_ = make_signed("other-name-server", "/CN=other.example", "ca", "other_name_ext", 4);

    // Expired: openssl 3.0's x509 -req cannot backdate, `openssl ca` can.
    expired_server_ = {dir_ + "/expired-server.crt", dir_ + "/expired-server.key"};
    const std::string csr = dir_ + "/expired-server.csr";
    openssl({"req", "-new", "-config", config_, "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
             "-nodes", "-keyout", expired_server_.key, "-subj", "/CN=127.0.0.1", "-out", csr});
    openssl({"ca", "-batch", "-config", config_, "-cert", ca_file_, "-keyfile", dir_ + "/ca.key", "-in", csr,
             "-out", expired_server_.cert, "-startdate", "20200101000000Z", "-enddate", "20200102000000Z",
             "-extensions", "server_ext", "-notext"});
}

std::string TlsCerts::make_ca(const std::string& name, const std::string& subject) {
    const std::string cert = dir_ + "/" + name + ".crt";
    openssl({"req", "-x509", "-config", config_, "-extensions", "ca_ext", "-newkey", "ec", "-pkeyopt",
             "ec_paramgen_curve:P-256", "-nodes", "-keyout", dir_ + "/" + name + ".key", "-subj", subject,
             "-days", kValidDays, "-out", cert});
    return cert;
}

CertFiles TlsCerts::make_signed(const std::string& name, const std::string& subject, const std::string& ca,
                                const std::string& extensions, int serial) {
    CertFiles files{dir_ + "/" + name + ".crt", dir_ + "/" + name + ".key"};
    const std::string csr = dir_ + "/" + name + ".csr";
    openssl({"req", "-new", "-config", config_, "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
             "-keyout", files.key, "-subj", subject, "-out", csr});
    openssl({"x509", "-req", "-in", csr, "-CA", dir_ + "/" + ca + ".crt", "-CAkey", dir_ + "/" + ca + ".key",
             "-set_serial", std::to_string(serial), "-days", kValidDays, "-sha256", "-extfile", config_,
             "-extensions", extensions, "-out", files.cert});
    return files;
}

void TlsCerts::openssl(const std::vector<std::string>& args) const {
    ChildProcess child(kOpenssl, args);
    const auto status = child.wait_exit(kOpensslDeadline);
    if (!status) {
        child.kill_hard();
        throw std::runtime_error("TlsCerts: `" + join(args) + "` did not exit within 30 s; output:\n" +
                                 child.output());
    }
    if (*status != 0) {
        throw std::runtime_error("TlsCerts: `" + join(args) + "` exited with status " + std::to_string(*status) +
                                 "; output:\n" + child.output());
    }
}

}  // namespace expiry::test
