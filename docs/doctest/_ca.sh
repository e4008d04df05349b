# A root CA and an intermediate made with OpenSSL; `issue CSR OUT` issues a certificate.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout root.key \
    -subj "/CN=Example Root" -days 3650 -out root.pem 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout intermediate.key \
    -subj "/CN=Example Intermediate" -out intermediate.csr 2>/dev/null
printf 'basicConstraints=critical,CA:true\nkeyUsage=critical,keyCertSign,cRLSign\n' > ca.ext
openssl x509 -req -in intermediate.csr -CA root.pem -CAkey root.key -CAcreateserial \
    -days 3650 -extfile ca.ext -out intermediate.pem 2>/dev/null
cat intermediate.pem root.pem > ca-chain.pem
issue() {
    printf 'basicConstraints=CA:false\nkeyUsage=critical,digitalSignature\n' > leaf.ext
    openssl x509 -req -in "$1" -CA intermediate.pem -CAkey intermediate.key -CAcreateserial \
        -days 365 -extfile leaf.ext -out "$2" 2>/dev/null
}
