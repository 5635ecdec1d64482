package dev.idemkit.spring.jpasample;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/** A Spring Boot service on JPA (Boot's JpaTransactionManager): its business writes entities, not SQL. */
@SpringBootApplication
public class JpaSampleService {}
