/* The floor for bench/run: the least a TLS client can do to answer getcert's question over the
 * same OpenSSL. Connects, handshakes with SNI, verifies the chain and the host name against a
 * CA file or the system store, and prints the presented chain as PEM. No options parsing, no
 * model, no error reporting past one line: whatever getcert costs above this is ours.
 *
 * Usage: floor HOST PORT [CAFILE]     (no CAFILE: the system store, SSL_CERT_FILE/DIR honoured)
 *        floor -f LIST CAFILE         (bench/fleet: every HOST:PORT line of LIST in turn, one
 *                                      context for all, as a fleet client would share it)
 * Exit: 0 every target verified, 1 anything else.
 */
#include <netdb.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int dial(const char* host, const char* port) {
  struct addrinfo hints, *res = NULL;
  memset(&hints, 0, sizeof hints);
  hints.ai_socktype = SOCK_STREAM;
  if (getaddrinfo(host, port, &hints, &res) != 0) return -1;
  int fd = -1;
  for (struct addrinfo* ai = res; ai != NULL && fd < 0; ai = ai->ai_next) {
    fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(res);
  return fd;
}

/* One target: connect, handshake, verify, print the presented chain. 0 when verified. */
static int fetch_one(SSL_CTX* ctx, const char* host, const char* port) {
  int fd = dial(host, port);
  if (fd < 0) {
    fprintf(stderr, "floor: cannot connect to %s:%s\n", host, port);
    return 1;
  }
  SSL* ssl = SSL_new(ctx);
  SSL_set_fd(ssl, fd);
  SSL_set_tlsext_host_name(ssl, host);
  SSL_set1_host(ssl, host);
  int rc = 1;
  if (SSL_connect(ssl) == 1 && SSL_get_verify_result(ssl) == X509_V_OK) {
    STACK_OF(X509)* chain = SSL_get_peer_cert_chain(ssl);
    for (int i = 0; i < sk_X509_num(chain); ++i) {
      PEM_write_X509(stdout, sk_X509_value(chain, i));
    }
    rc = 0;
  } else {
    fprintf(stderr, "floor: handshake or verification failed for %s:%s\n", host, port);
  }
  SSL_shutdown(ssl);
  SSL_free(ssl);
  close(fd);
  return rc;
}

/* Every "HOST:PORT" line of `list` ('#' starts a comment line). */
static int fetch_list(SSL_CTX* ctx, const char* list) {
  FILE* in = fopen(list, "r");
  if (in == NULL) {
    fputs("floor: cannot open the list\n", stderr);
    return 1;
  }
  char line[512];
  int rc = 0;
  while (fgets(line, sizeof line, in) != NULL) {
    line[strcspn(line, "\r\n")] = '\0';
    char* colon = strrchr(line, ':');
    if (line[0] == '#' || line[0] == '\0' || colon == NULL) continue;
    *colon = '\0';
    rc |= fetch_one(ctx, line, colon + 1);
  }
  fclose(in);
  return rc;
}

int main(int argc, char** argv) {
  const int list_mode = argc == 4 && strcmp(argv[1], "-f") == 0;
  if (argc < 3) {
    fputs("usage: floor HOST PORT [CAFILE] | floor -f LIST CAFILE\n", stderr);
    return 1;
  }
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  int ok = argc > 3 ? SSL_CTX_load_verify_locations(ctx, argv[3], NULL)
                    : SSL_CTX_set_default_verify_paths(ctx);
  if (ok != 1) {
    fputs("floor: cannot load the trust store\n", stderr);
    return 1;
  }
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
  int rc = list_mode ? fetch_list(ctx, argv[2]) : fetch_one(ctx, argv[1], argv[2]);
  SSL_CTX_free(ctx);
  return rc;
}
