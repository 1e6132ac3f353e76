-- The service's own database, beside Temporal's (docker-compose.temporal.yml).
CREATE USER mediasvc WITH PASSWORD 'mediasvc';
CREATE DATABASE mediasvc OWNER mediasvc;
