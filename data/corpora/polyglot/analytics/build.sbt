ThisBuild / scalaVersion := "2.13.12"
ThisBuild / organization := "de.kaffeekontor"

lazy val analytics = (project in file("."))
  .settings(
    name := "analytics",
    libraryDependencies ++= Seq(
      "com.softwaremill.sttp.client3" %% "core" % "3.9.2",
      "com.softwaremill.sttp.client3" %% "circe" % "3.9.2",
      "io.circe" %% "circe-generic" % "0.14.6",
      "org.scalatest" %% "scalatest" % "3.2.17" % Test
    ),
    // Await.result(..., 5.seconds) in tests needs a generous timeout on the CI runners
    Test / parallelExecution := false
  )
