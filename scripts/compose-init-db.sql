-- The service's own database, beside Temporal's (compose.scale-out.yaml).
CREATE USER mediasvc WITH PASSWORD 'mediasvc';
CREATE DATABASE mediasvc OWNER mediasvc;
